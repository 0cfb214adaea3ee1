"""Seconds this process spent in each stage of model work, summed since the last `reset()`.

bench/bench_device.py prints them beside a model run's wall time, so what is not encoding (reading items,
the embedding cache's lookups and writes, the scoring) is measured where it happens rather than guessed.
A stage is timed on the thread that waits for it: "encode" is the time the run waited for its encoder, not
the encoder's own time when it ran ahead in a thread. Adding a float to a dict costs nothing beside the work.
Beside the wall seconds, the CPU seconds of that thread in the stage (`time.thread_time`): on a shared machine
wall time swings with the load, the CPU time much less.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

SECONDS: Counter[str] = Counter()
CPU_SECONDS: Counter[str] = Counter()


@contextmanager
def timed(stage: str) -> Iterator[None]:
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        SECONDS[stage] += time.perf_counter() - start
        CPU_SECONDS[stage] += time.thread_time() - cpu


def reset() -> None:
    SECONDS.clear()
    CPU_SECONDS.clear()


def breakdown() -> str:
    """"read 0.41 s (CPU 0.30 s), lookup 0.15 s (CPU 0.12 s), …" in the order the stages were first entered."""
    return ", ".join(f"{stage} {seconds:.2f} s (CPU {CPU_SECONDS[stage]:.2f} s)" for stage, seconds in SECONDS.items())
