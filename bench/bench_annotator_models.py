"""Time each annotator model (measures/annotator_models.py, crowd-kit) on simulated crowds of growing size.

Why: reports fit every model when a task's human answers number at most ANNOTATOR_MODELS_MAX_ANSWERS
(default 5,000; docs/reports.md, "Annotator models"); this prints what that costs, per model, so the default
can be checked on the machine that runs the workers. Prints CPU seconds (the figure to trust on a shared,
loaded machine) and wall seconds of one fit, and the consensus accuracy against the planted truth.

Run: .venv/bin/python bench/bench_annotator_models.py [n_answers ...]   (default: 1000 5000)
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures import annotator_models as am

N_ANNOTATORS = 5  # four 80% accurate, one random: each item answered by all five


def crowd(n_answers: int, seed: int = 0) -> tuple[list[am.Triple], dict[int, int]]:
    rng = np.random.default_rng(seed)
    n_items = n_answers // N_ANNOTATORS
    truth = rng.integers(0, 3, size=n_items)
    triples: list[am.Triple] = []
    for a in range(N_ANNOTATORS):
        right = rng.random(n_items) < (0.8 if a < N_ANNOTATORS - 1 else 0.0)
        answers = np.where(right, truth, rng.integers(0, 3, size=n_items))
        triples += [(i, f"a{a}", int(v)) for i, v in enumerate(answers)]
    return triples, {i: int(t) for i, t in enumerate(truth)}


def main(sizes: list[int]) -> None:
    warnings.simplefilter("ignore")
    am.fit("majority", crowd(50)[0])  # import crowd-kit and pandas once, outside the timings
    print(f"{'answers':>8} {'model':<12} {'cpu s':>7} {'wall s':>7} {'accuracy':>8}")
    for size in sizes:
        triples, truth = crowd(size)
        for method in am.METHODS:
            cpu, wall = time.process_time(), time.perf_counter()
            result = am.fit(method, triples)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            accuracy, _ = am.accuracy_against(result.consensus, truth)
            print(f"{size:>8} {method:<12} {cpu:>7.2f} {wall:>7.2f} {accuracy:>8.3f}")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1000, 5000])
