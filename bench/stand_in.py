"""A stand-in for an accelerator: an encoder with a GPU's timing and none of its work.

It sleeps 1/rate s a text with the GIL released, as a GPU's forward pass leaves the CPU free, and returns
seeded random vectors; so the app's own work around encoding (cache lookups and writes, reading items and
documents, scoring) can be measured, and overlapped with encoding, on a machine without a GPU
(bench/bench_device.py pipeline and retrieval --stand-in, bench/bench_sage.py --stand-in).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np


class StandIn:
    device, dimensions, encodes_in_background = "stand-in", 384, True

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.drawn: dict[int, np.ndarray] = {}  # the vectors of a call of n texts, drawn once (seeded by n)

    def encode(self, texts: list[str]) -> np.ndarray:
        time.sleep(len(texts) / self.rate)
        n = len(texts)
        if n not in self.drawn:  # drawing 15 million normals cost 0.2 CPU s a run, counted as the app's before
            self.drawn[n] = np.random.default_rng(n).standard_normal((n, 384)).astype(np.float32)
        return self.drawn[n].copy()


def stand_in_for(model: Any, rate: float) -> None:
    """Make the stand-in what backend_of(model) returns in this process (the model is never loaded)."""
    from agreement.model_runs import embedding

    embedding._loaded[model.identity] = StandIn(rate)
