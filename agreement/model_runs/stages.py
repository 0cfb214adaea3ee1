"""Seconds this process spent in each stage of model work, summed since the last `reset()`.

bench/bench_device.py prints them beside a model run's wall time, so what is not encoding (reading items,
the embedding cache's lookups and writes, the scoring) is measured where it happens rather than guessed.
A stage is timed on the thread that waits for it: "encode" is the time the run waited for its encoder, not
the encoder's own time when it ran ahead in a thread. Adding a float to a dict costs nothing beside the work.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

SECONDS: Counter[str] = Counter()


@contextmanager
def timed(stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        SECONDS[stage] += time.perf_counter() - start


def reset() -> None:
    SECONDS.clear()


def breakdown() -> str:
    """"read 0.41 s, lookup 0.15 s, …" in the order the stages were first entered."""
    return ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in SECONDS.items())
