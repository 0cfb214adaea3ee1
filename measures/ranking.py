"""Ranking metrics, pure: one query's candidate scores against gold, or a ranked list against qrels.

Ties in rankings are handled tie-aware (McSherry & Najork 2008: the expectation over all orders
of the tied documents), so a result never depends on the order candidates were stored in.
A query with no relevant gold candidate scores 0 on the per-query scores (AP, reciprocal rank, nDCG@k,
Recall@k), as pytrec_eval and MTEB count it (measures/trec_scoring.py, which scores models and runs):
humans and models average such a query in the same way.
The trec_eval-style functions (`ranked_*`) take a ranked list and qrels, as TREC run files give them; they
keep SAGE's rule (A.6: a query with no relevant document is excluded).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from sklearn import metrics as skm

from measures.metric_base import FloatArray, IntArray, Metric, Undefined, metric

# ---------------------------------------------------------------- ranking, one query (scores per candidate)


@metric
def average_precision(gold: Sequence[float], scores: Sequence[float]) -> float:
    """sklearn average precision of candidate scores (HUME: the annotator's 0/1 judgments) vs 0/1
    gold; 0 for a query with no relevant gold candidate (pytrec_eval, MTEB)."""
    g = np.asarray(gold, dtype=float) > 0
    if not g.any():
        return 0.0
    return float(skm.average_precision_score(g, np.asarray(scores, dtype=float)))


@metric
def reciprocal_rank(gold: Sequence[float], scores: Sequence[float], k: int = 10) -> float:
    """Tie-aware reciprocal rank of the first relevant candidate within the top k (0 if none).

    With 0/1 judgments as scores almost everything is tied, so we take the expectation over the
    orders of each tied group: if the first group holding relevant candidates starts after `before`
    candidates and has g members of which r relevant, P(first relevant at slot s) = C(g−s, r−1)/C(g, r).
    """
    g = np.asarray(gold, dtype=float) > 0
    before = 0
    for group in _tie_groups(np.asarray(scores, dtype=float)):
        size, hits = group.size, int(g[group].sum())
        if hits:
            slots = range(1, size - hits + 2)
            total = math.comb(size, hits)
            return sum(math.comb(size - s, hits - 1) / total / (before + s) for s in slots if before + s <= k)
        before += size
    return 0.0


@metric
def ndcg_at_k(
    gold: Sequence[float], scores: Sequence[float], k: int = 10, gains: Literal["exponential", "linear"] = "exponential"
) -> float:
    """nDCG@k (sklearn, tie-averaged) with gains 2^rel − 1 (graded; equal to rel for 0/1) or rel; 0 for a
    query with no relevant gold candidate (trec_eval's ndcg_cut, MTEB)."""
    rel = np.asarray(gold, dtype=float)
    if rel.size < 2:
        raise Undefined("undefined: nDCG needs at least 2 candidates")
    if not (rel > 0).any():
        return 0.0
    gain = np.power(2.0, rel) - 1.0 if gains == "exponential" else rel
    return float(skm.ndcg_score(gain[None, :], np.asarray(scores, dtype=float)[None, :], k=k))


@metric
def recall_at_k(gold: Sequence[float], scores: Sequence[float], k: int = 10, threshold: float = 1.0) -> float:
    """Tie-aware share of the documents with gold ≥ threshold that rank in the top k.

    A tied group straddling the cut contributes its relevant count × the share of its slots above
    the cut (the expectation over orders of the tie). 0 when no document reaches the threshold (trec_eval).
    """
    relevant = np.asarray(gold, dtype=float) >= threshold
    if not relevant.any():
        return 0.0
    found, before = 0.0, 0
    for group in _tie_groups(np.asarray(scores, dtype=float)):
        slots = min(group.size, max(k - before, 0))
        found += relevant[group].sum() * slots / group.size
        before += group.size
    return float(found / relevant.sum())


def mean_over_queries(
    fn: Metric[..., float], queries: Iterable[tuple[Sequence[float], Sequence[float]]], **kwargs: Any
) -> tuple[float | None, int]:
    """Mean of a per-query metric over the queries where it is defined, and how many were excluded."""
    values = [fn(gold, scores, **kwargs) for gold, scores in queries]
    kept = [v for v in values if v is not None]
    return (float(np.mean(kept)) if kept else None), len(values) - len(kept)


def _tie_groups(scores: FloatArray) -> list[IntArray]:
    """Indices of candidates grouped by equal score, best score first."""
    values = np.unique(scores)[::-1]
    return [np.flatnonzero(scores == v) for v in values]


# ---------------------------------------------------------------- ranking, trec_eval style (ranked list + qrels)


@metric
def ranked_average_precision(ranking: Sequence[str], qrels: Mapping[str, float]) -> float:
    """trec_eval `map` for one query: Σ precision@i over relevant retrieved docs / all relevant."""
    relevant = {d for d, rel in qrels.items() if rel > 0}
    if not relevant:
        raise Undefined("excluded: no relevant document in qrels")
    hits, total = 0, 0.0
    for i, doc in enumerate(ranking, start=1):
        if doc in relevant:
            hits += 1
            total += hits / i
    return total / len(relevant)


@metric
def ranked_reciprocal_rank(ranking: Sequence[str], qrels: Mapping[str, float], k: int = 10) -> float:
    """trec_eval `recip_rank` cut at k: 1/rank of the first relevant doc in the top k, else 0."""
    if not any(rel > 0 for rel in qrels.values()):
        raise Undefined("excluded: no relevant document in qrels")
    for i, doc in enumerate(ranking[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / i
    return 0.0


@metric
def ranked_ndcg_at_k(
    ranking: Sequence[str], qrels: Mapping[str, float], k: int = 10, gains: Literal["linear", "exponential"] = "linear"
) -> float:
    """nDCG@k of a ranked list; the ideal DCG uses every judged doc (trec_eval `ndcg_cut_k`, whose
    gain is the relevance level itself, i.e. gains="linear"); discount 1/log2(rank + 1)."""

    def gain(rel: float) -> float:
        return 2.0**rel - 1.0 if gains == "exponential" else float(rel)

    ideal_rels = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    if not ideal_rels:
        raise Undefined("excluded: no relevant document in qrels")
    dcg = sum(gain(qrels.get(d, 0)) / math.log2(i + 1) for i, d in enumerate(ranking[:k], start=1))
    ideal = sum(gain(r) / math.log2(i + 1) for i, r in enumerate(ideal_rels, start=1))
    return dcg / ideal


def ranked_mean(
    fn: Metric[..., float], run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], **kwargs: Any
) -> tuple[float | None, int]:
    """Mean over the run's queries that have qrels with a relevant doc, and how many were excluded."""
    values = [fn(run[q], qrels.get(q, {}), **kwargs) for q in run]
    kept = [v for v in values if v is not None]
    return (float(np.mean(kept)) if kept else None), len(values) - len(kept)
