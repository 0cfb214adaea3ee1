"""Time the classification human-score protocol on 100,000 items × 3 annotators, in memory.

Why: the end-to-end report pipeline (load annotations, score, store) must stay under ~5 s on a
large task, so `agreement.core.scoring.score_task` on the classification path should take well under
1.5 s. Prints wall-clock and CPU seconds (best of 3 runs, no tracing: CPU time is the figure to
trust on a shared, loaded machine), peak Python allocations (tracemalloc, a separate run, since
tracing slows the code down) and the process's peak RSS.

Run: .venv/bin/python bench/bench_metrics_inmemory.py [n_items]
"""

from __future__ import annotations

import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.core.scoring import score_task

LABELS = ["anger", "fear", "joy", "love", "sadness", "surprise"]
ANNOTATORS = ["alice", "bob", "carol"]


def make_task(n_items: int, seed: int = 0) -> tuple[dict[int, dict[str, Any]], dict[int, str]]:
    """Gold labels plus 3 annotators who agree with gold 70% of the time and skip 2% of items."""
    rng = random.Random(seed)
    gold = {i: rng.choice(LABELS) for i in range(n_items)}
    answers: dict[int, dict[str, Any]] = {}
    for i, label in gold.items():
        answers[i] = {
            name: None if rng.random() < 0.02 else (label if rng.random() < 0.7 else rng.choice(LABELS))
            for name in ANNOTATORS
        }
    return answers, gold


def main() -> None:
    n_items = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    answers, gold = make_task(n_items)
    timings, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        report = score_task("classification", answers, gold, labels=LABELS)
        timings.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    tracemalloc.start()
    score_task("classification", answers, gold, labels=LABELS)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"classification score_task: {n_items:,} items x {len(ANNOTATORS)} annotators")
    print(f"  wall seconds (best of 3): {min(timings):.3f}   (all: {', '.join(f'{t:.3f}' for t in timings)})")
    print(f"  CPU seconds (best of 3):  {min(cpu):.3f}")
    print(f"  peak traced allocations:  {peak / 2**20:.1f} MiB")
    print(f"  peak RSS of the process:  {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    human, agreement = report["human"], report["agreement"]
    print(f"  human accuracy {human['main_score']:.4f} [{human['ci_low']:.4f}, {human['ci_high']:.4f}]"
          f"  fleiss_kappa {agreement['fleiss_kappa']:.4f}  disagreement rows {len(report['disagreement']):,}")


if __name__ == "__main__":
    main()
