"""PPI estimates of pooled retrieval runs (docs/ppi.md, "Retrieval runs"): an LLM judge graded every pooled
(query, document) pair, people a uniform sample of them, and each run gets its mean relevance@k and P@k
with PPI++ intervals, so runs can be ranked with a fraction of the human judgments.

A pool is a graded-relevance task with one item per pair (docs/retrieval.md, "Pools"). A run's top-k pairs
are a subset of the pool's items, and the people's uniform sample of the pool, restricted to them, is a
uniform sample of them: each run's estimate is the PPI++ estimate over its own pairs (the loader's numbers,
scoped to the run). relevance@k is the mean grade over the run's top-k pairs and P@k their share graded at
or above the threshold; with k documents for every query these are the means over queries of the per-query
values. Two runs share pairs, so their estimates are not independent: no difference interval is given.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from agreement.ppi.ppi_loading import PPIInputError, load_numbers, pool_items
from agreement.retrieval.models import Pool, PoolUnit, RankingEntry
from measures.ppi.estimates import z_value
from measures.ppi.task_estimates import estimate_row, sampling_statement, scope_estimate
from tasks_app.models import Task


def find_pool(task: Task) -> Pool:
    pool = Pool.objects.filter(task=task).first()
    if pool is None:
        raise PPIInputError(f"task {task.name!r} is not a retrieval pool (make one with pool_runs)")
    return pool


def run_estimates(task: Task, judge_name: str, *, k: int = 10, alpha: float = 0.05,
                  threshold: float | None = None) -> dict[str, Any]:
    """Every pooled run's relevance@k and P@k, PPI++ and classical, best relevance first."""
    z_value(alpha)
    pool = find_pool(task)
    if not 1 <= k <= pool.depth:
        raise PPIInputError(f"k = {k}: must be from 1 to the pool's depth {pool.depth} (deeper, a run's top-k "
                            "holds documents nobody judged)")
    numbers = load_numbers(task, judge_name, threshold=threshold)
    row_of_item = {row[0]: index for index, row in enumerate(pool_items(task))}
    row_of_pair = {(q, d): row_of_item[item] for item, q, d in
                   PoolUnit.objects.filter(pool=pool).values_list("item_id", "query_id", "document_id")
                   if item in row_of_item}
    queries = {q for q, _d in row_of_pair}
    runs = []
    for run in pool.rankings.order_by("name"):
        mask = np.zeros(len(numbers.items), dtype=bool)
        entries = RankingEntry.objects.filter(ranking=run, rank__lte=k, query_id__in=queries).values_list(
            "query_id", "document_id")
        missing = 0
        for pair in entries:
            if pair in row_of_pair:
                mask[row_of_pair[pair]] = True
            else:
                missing += 1
        metrics = []
        for column, metric in enumerate((f"relevance@{k}", f"P@{k}")):
            result = scope_estimate(numbers, column, mask, alpha)
            metrics.append({**estimate_row("run", run.name, metric, result), "metric": metric})
        runs.append({"run": run.name, "k": k, "n_pairs": int(mask.sum()), "n_pairs_unjudged": missing,
                     "n_queries": len({q for q, _d in entries}), "metrics": metrics})
    runs.sort(key=lambda r: (-(r["metrics"][0]["estimate"] or -np.inf), r["run"]))
    threshold_used = numbers.estimands[1].split(":", 1)[1]
    return {"task": task.name, "task_id": task.pk, "judge": judge_name, "k": k, "alpha": alpha,
            "confidence": 1 - alpha, "threshold": float(threshold_used), "sampling": sampling_statement(numbers),
            "n_pairs": len(numbers.items), "n_labelled": int(numbers.labelled.sum()),
            "metric_note": (f"relevance@{k}: the mean grade of the run's top-{k} pooled pairs; P@{k}: their share "
                            f"graded ≥ {threshold_used}; runs share pairs, so no difference interval is given"),
            "runs": runs}
