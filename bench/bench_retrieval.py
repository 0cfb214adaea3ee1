"""Retrieval figures: exact top-K against a bare numpy matmul + argpartition, and scoring many runs.

1. top_k: 1,000 queries over a 200,000-document corpus of 384-d float32 vectors, top-100, already
   L2-normalised (both sides get the same arrays). The bare baseline is one `queries @ docs.T` and one
   `argpartition` with no sort of the K kept; top_k works in query chunks and sorts each row's K.
   Goal: top_k at ≥ 0.8× the baseline's speed (ratio = baseline seconds / top_k seconds).
2. scoring: 100 runs × 1,000 queries at depth 100, nDCG@k and Recall@k for every k = 1…100 and MAP,
   against graded judgments of ~60 documents per query. Goal: under 5 s.

Best of 3 wall-clock runs, CPU seconds beside them (the machine is shared: CPU time is the steadier figure).
Run: .venv/bin/python bench/bench_retrieval.py [n_docs] [n_queries]
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.retrieval.cosine_top_k import l2_normalise, top_k
from measures.trec_scoring import Judgments, Prepared, evaluate


def best_of(fn: Callable[[], object], runs: int = 3) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def bench_top_k(n_docs: int, n_queries: int, dim: int = 384, k: int = 100) -> None:
    rng = np.random.default_rng(0)
    docs = l2_normalise(rng.standard_normal((n_docs, dim), dtype=np.float32))
    queries = l2_normalise(rng.standard_normal((n_queries, dim), dtype=np.float32))

    def bare() -> np.ndarray:
        return np.argpartition(-(queries @ docs.T), k - 1, axis=1)[:, :k]

    def ours() -> tuple[np.ndarray, np.ndarray]:
        return top_k(queries, docs, k, chunk=256, normalised=True)

    idx, _ = ours()
    assert np.array_equal(np.sort(idx, axis=1), np.sort(bare(), axis=1)), "top_k disagrees with the baseline"
    b_wall, b_cpu = best_of(bare)
    o_wall, o_cpu = best_of(ours)
    print(f"top-{k} of {n_queries:,} queries over {n_docs:,} × {dim}-d documents")
    print(f"  bare matmul + argpartition: {b_wall:.2f} s wall, {b_cpu:.2f} s CPU")
    print(f"  top_k (chunks of 256, sorted): {o_wall:.2f} s wall, {o_cpu:.2f} s CPU")
    print(f"  ratio (bare / top_k): {b_wall / o_wall:.2f}× wall, {b_cpu / o_cpu:.2f}× CPU (goal ≥ 0.8×)")


def bench_scoring(n_runs: int = 100, n_queries: int = 1000, depth: int = 100, judged: int = 60) -> None:
    rng = np.random.default_rng(1)
    n_docs = 50_000
    query = np.repeat(np.arange(n_queries), judged)
    doc = np.concatenate([rng.choice(n_docs, judged, replace=False) for _ in range(n_queries)])
    gain = np.round(rng.uniform(0, 10, len(doc)), 1)
    runs = [np.stack([rng.choice(n_docs, depth, replace=False) for _ in range(n_queries)]) for _ in range(n_runs)]
    codes = np.arange(n_queries)

    def score_all() -> list[float]:
        prepared = Prepared(Judgments.of(query, doc, gain), threshold=7.0, k_max=100)
        return [evaluate(run, codes, prepared).map for run in runs]

    wall, cpu = best_of(score_all)
    print(f"scoring {n_runs} runs × {n_queries:,} queries (depth {depth}) at k = 1…100 and MAP: "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU (goal < 5 s)")


if __name__ == "__main__":
    n_docs = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    n_queries = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    bench_top_k(n_docs, n_queries)
    bench_scoring()
