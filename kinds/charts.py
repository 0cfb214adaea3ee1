"""The numbers behind a report's charts, taken from a kind's scorer when the report is built.

Why at build time: the charts need item-level answers (a confusion matrix, rating pairs), which the stored
report does not keep; computing them here, from the matrices the scorer already holds, keeps the page
from reading every answer again and keeps metric code out of views. Bounded in size: at most
`MAX_POINTS` points per scatter (a seeded sample, the total is given). Pure: no Django.

Per-annotator 95% CIs use the rule the kind's human score uses for one annotator (HUME Table 8): Wilson
for accuracy (n = items), and for clustering and reranking the Wilson interval of the score with N = texts
or queries; Fisher z for correlations; a seeded bootstrap over queries for nDCG.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from kinds.clustering.scorer import ClusteringScorer
from kinds.graded_relevance.scorer import GradedRelevanceScorer
from kinds.likert.scorer import LikertScorer
from kinds.rating_scorers import UnitScorer
from kinds.reranking.scorer import RerankingScorer
from kinds.scorers import CategoricalScorer, KindScorer, Scores
from kinds.sts.scorer import StsScorer
from measures import metrics as m

MAX_POINTS = 2000
SEED = 0


def chart_data(scorer: KindScorer, per_annotator: dict[str, Scores]) -> dict[str, Any]:
    """Every chart's data for one scored task; keys present only where the kind has the chart."""
    data: dict[str, Any] = {"annotator_scores": annotator_scores(scorer, per_annotator)}
    if isinstance(scorer, CategoricalScorer):
        data |= categorical(scorer)
    elif isinstance(scorer, RerankingScorer):
        data |= judgments(scorer)
    elif isinstance(scorer, ClusteringScorer):
        data["distribution"] = clusters_per_set(scorer)
    if isinstance(scorer, (StsScorer, LikertScorer, GradedRelevanceScorer)):
        data |= scatters(scorer)
    return data


# ---------------------------------------------------------------- per-annotator scores with CIs


def annotator_scores(scorer: KindScorer, per_annotator: dict[str, Scores]) -> dict[str, Any]:
    main = scorer.main()
    rows = []
    for name in scorer.ctx.names:
        score = per_annotator[name].get(main)
        (interval, _), method, n = annotator_interval(scorer, name, score)
        rows.append({"name": name, "kind": scorer.ctx.kinds[name], "score": score, "n": n, "ci_method": method,
                     "ci_low": interval[0] if interval else None, "ci_high": interval[1] if interval else None})
    return {"metric": main, "rows": rows}


def annotator_interval(scorer: KindScorer, name: str, score: float | None) -> tuple[Any, str, int]:
    """(CI explained, its method, n) of one annotator's main score."""
    column = scorer.ctx.names.index(name)
    if isinstance(scorer, CategoricalScorer):
        predicted = scorer.codes[:, column]
        scored = (scorer.gold_codes >= 0) & (predicted >= 0)
        correct = int((predicted[scored] == scorer.gold_codes[scored]).sum())
        return m.wilson_interval.explain(correct, int(scored.sum())), "wilson", int(scored.sum())
    if isinstance(scorer, ClusteringScorer):
        n = scorer.n_texts([name])
        return _wilson_of_score(score, n), "wilson (N = texts)", n
    if isinstance(scorer, RerankingScorer):
        n = len(scorer.queries(scorer.matrix[:, column]))
        return _wilson_of_score(score, n), "wilson (N = queries)", n
    if isinstance(scorer, GradedRelevanceScorer):
        ndcg = [v for v, _ in scorer._per_query(scorer.matrix[:, column]).values() if v is not None]
        return m.bootstrap_interval.explain(ndcg), "bootstrap_bca", len(ndcg)
    if isinstance(scorer, StsScorer):
        x, _ = scorer._pairs(scorer.matrix[:, column])
        return m.fisher_z_interval.explain(score, x.size, variance=scorer.ctx.spearman_variance), "fisher_z", x.size
    if isinstance(scorer, LikertScorer):
        n = min(scorer._scores(scorer.matrix[:, column])[1], default=0)
        return m.fisher_z_interval.explain(score, n), "fisher_z", n
    return (None, "no interval for this kind"), "", 0


def _wilson_of_score(score: float | None, n: int) -> Any:
    if score is None:
        return None, "undefined: no score"
    return m.wilson_interval.explain(score * n, n)


# ---------------------------------------------------------------- labels


def categorical(scorer: CategoricalScorer) -> dict[str, Any]:
    """Confusion matrix of the human majority vote (the report's tie rule) against gold, and how often each
    annotator (and gold) gave each label."""
    labels = [str(c) for c in scorer.categories]
    vote = m.majority_vote(scorer.table)
    scored = (scorer.gold_codes >= 0) & (vote >= 0)
    size = len(labels)
    matrix = np.bincount(scorer.gold_codes[scored] * size + vote[scored], minlength=size * size).reshape(size, size)
    rows = [{"name": name, "counts": np.bincount(column[column >= 0], minlength=size).tolist()}
            for name, column in zip(scorer.ctx.names, scorer.codes.T, strict=True)]
    gold = scorer.gold_codes[scorer.gold_codes >= 0]
    rows.append({"name": "gold", "counts": np.bincount(gold, minlength=size).tolist()})
    return {"confusion": {"labels": labels, "matrix": matrix.tolist(), "rows": "gold", "columns": "majority vote"},
            "distribution": {"labels": labels, "rows": rows}}


def judgments(scorer: RerankingScorer) -> dict[str, Any]:
    """Reranking: every human judgment (relevant or not) against gold relevance, and each annotator's share
    of "relevant" judgments."""
    gold = np.array([scorer.gold_of(i, key) for i, key in scorer.units], dtype=float)
    pool = scorer.pool_matrix
    matrix = np.zeros(4, dtype=np.int64)
    for column in pool.T:
        keep = ~np.isnan(column) & ~np.isnan(gold)
        matrix += np.bincount(2 * (gold[keep] > 0) + (column[keep] > 0), minlength=4)
    matrix = matrix.reshape(2, 2)
    rows = []
    for name, column in zip(scorer.ctx.names, scorer.matrix.T, strict=True):
        given = column[~np.isnan(column)] > 0
        rows.append({"name": name, "counts": [int((~given).sum()), int(given.sum())]})
    known = gold[~np.isnan(gold)] > 0
    rows.append({"name": "gold", "counts": [int((~known).sum()), int(known.sum())]})
    labels = ["not relevant", "relevant"]
    return {"confusion": {"labels": labels, "matrix": matrix.tolist(), "rows": "gold",
                          "columns": "human judgments (all annotators)"},
            "distribution": {"labels": labels, "rows": rows}}


def clusters_per_set(scorer: ClusteringScorer) -> dict[str, Any]:
    """How many clusters each annotator (and gold) made per set: the clustering kind's label distribution."""
    per_name = {name: Counter(len(set(answer[name])) for answer in scorer.valid.values() if name in answer)
                for name in scorer.ctx.names}
    per_name["gold"] = Counter(len(set(scorer.ctx.gold[i])) for i in scorer.ctx.items if scorer.ctx.has_gold(i))
    sizes = sorted({size for counts in per_name.values() for size in counts})
    return {"labels": [f"{size} clusters" for size in sizes], "title": "clusters per set",
            "rows": [{"name": name, "counts": [counts.get(size, 0) for size in sizes]}
                     for name, counts in per_name.items()]}


# ---------------------------------------------------------------- ratings


def scatters(scorer: UnitScorer) -> dict[str, Any]:
    """Each annotator's ratings against gold, and the two annotators who share the most units against
    each other (seeded samples of at most MAX_POINTS points)."""
    gold = np.array([scorer.gold_of(i, key) for i, key in scorer.units], dtype=float)
    names = scorer.ctx.names
    rated = ~np.isnan(scorer.matrix) & ~np.isnan(gold)[:, None]
    rows, columns = np.nonzero(rated.T)  # annotator by annotator, as the legend lists them
    keep = _sample_indices(len(rows))
    points = np.column_stack([gold[columns[keep]], scorer.matrix[columns[keep], rows[keep]], rows[keep]])
    data: dict[str, Any] = {}
    if len(rows):  # no chart of nothing (every answer skipped)
        data["scatter_gold"] = {"names": names, "n_points": len(rows), "scale": list(scorer.ctx.scale),
                                "points": [[g, r, int(i)] for g, r, i in points.tolist()]}
    pool = [names.index(n) for n in scorer.ctx.pool]
    best: tuple[int, int, int] | None = None
    for position, i in enumerate(pool):
        for j in pool[position + 1:]:
            shared = int((~np.isnan(scorer.matrix[:, i]) & ~np.isnan(scorer.matrix[:, j])).sum())
            if shared and (best is None or shared > best[0]):
                best = (shared, i, j)
    if best:
        _, i, j = best
        both = np.flatnonzero(~np.isnan(scorer.matrix[:, i]) & ~np.isnan(scorer.matrix[:, j]))
        chosen = both[_sample_indices(len(both))]
        pair = np.column_stack([scorer.matrix[chosen, i], scorer.matrix[chosen, j]])
        data["scatter_pair"] = {"a": names[i], "b": names[j], "n_points": len(both), "scale": list(scorer.ctx.scale),
                                "points": pair.tolist()}
    return data


def _sample_indices(total: int) -> np.ndarray:
    """All indices up to MAX_POINTS, else a seeded sample of MAX_POINTS of them, in order."""
    if total <= MAX_POINTS:
        return np.arange(total)
    return np.sort(np.random.default_rng(SEED).choice(total, MAX_POINTS, replace=False))
