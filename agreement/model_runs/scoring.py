"""How a model is scored on each task kind, following MTEB's evaluators (mteb 2.20.0, see
docs/models-in-app.md). Pure: numpy in, dicts of floats out, no Django (docs/style.md).

Each function returns (scores, predictions): `scores` has a `main_score` and the named figures;
`predictions[i]` is the model's output for item i (what it would have answered), kept for the item table.
Undefined figures (constant input, a single class) are None, never NaN, as in agreement/metrics.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from sklearn import metrics as skm
from sklearn.cluster import AgglomerativeClustering, MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

SEED = 42  # MTEB's Evaluator default seed
KMEANS_BATCH_SIZE = 500  # mteb ClusteringEvaluator's clustering_batch_size
CV_FOLDS = 5
Scores = dict[str, Any]


class CannotScore(ValueError):
    """The data does not allow this kind's score (e.g. no item with a truth value)."""


def _correlation(fn: Any, x: Sequence[float], y: Sequence[float]) -> float | None:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(fn(x, y).statistic)


def sts(similarities: Sequence[float], truth: Sequence[float]) -> tuple[Scores, list[float]]:
    """MTEB AbsTaskSTS: Spearman and Pearson of cosine similarity against the scores; main cosine_spearman."""
    spearman = _correlation(stats.spearmanr, truth, similarities)
    pearson = _correlation(stats.pearsonr, truth, similarities)
    return ({"main_score": spearman, "cosine_spearman": spearman, "cosine_pearson": pearson, "n": len(truth)},
            [float(s) for s in similarities])


def _first_relevant_rank(relevance: np.ndarray, order: np.ndarray, k: int) -> float:
    hits = np.flatnonzero(relevance[order][:k] > 0)
    return 1.0 / (hits[0] + 1) if hits.size else 0.0


def _ranking_order(similarities: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """Best first; ties broken by id descending, as pytrec_eval and mteb's mrr do."""
    keys = sorted(range(len(ids)), key=lambda i: (similarities[i], ids[i]), reverse=True)
    return np.asarray(keys, dtype=int)


def reranking(queries: Sequence[tuple[Sequence[str], Sequence[float], Sequence[float]]]) -> tuple[Scores, list[Any]]:
    """MTEB reranking (retrieval evaluator over each query's candidates): MAP, MRR@10, nDCG@10.

    queries: (candidate ids, similarities, 0/1 relevance) per query. A query with no relevant candidate
    is excluded (trec_eval skips it) and counted.
    """
    aps, rrs, ndcgs, predictions, excluded = [], [], [], [], 0
    for ids, sims, rel in queries:
        sims, rel = np.asarray(sims, dtype=float), (np.asarray(rel, dtype=float) > 0).astype(float)
        order = _ranking_order(sims, ids)
        predictions.append([ids[i] for i in order])
        if not rel.any():
            excluded += 1
            continue
        precision_at_hits = np.cumsum(rel[order]) / np.arange(1, len(order) + 1)
        aps.append(float((precision_at_hits * rel[order]).sum() / rel.sum()))
        rrs.append(_first_relevant_rank(rel, order, 10))
        ndcgs.append(_ndcg_ranked(rel, order, 10))
    if not aps:
        raise CannotScore("no query has a relevant candidate")
    mean_ap = float(np.mean(aps))
    return ({"main_score": mean_ap, "map": mean_ap, "mrr_at_10": float(np.mean(rrs)),
             "ndcg_at_10": float(np.mean(ndcgs)), "n": len(aps), "excluded_queries": excluded}, predictions)


def _ndcg_ranked(gains: np.ndarray, order: np.ndarray, k: int) -> float:
    """trec_eval's ndcg_cut (linear gains: gain = relevance) of one ranking."""
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float((gains[order][:k] * discounts[:len(order[:k])]).sum())
    ideal = np.sort(gains)[::-1][:k]
    idcg = float((ideal * discounts[:len(ideal)]).sum())
    return dcg / idcg if idcg > 0 else 0.0


def graded_relevance(queries: Sequence[tuple[Sequence[str], Sequence[float], Sequence[float]]]
                     ) -> tuple[Scores, list[Any]]:
    """nDCG@10 with trec_eval's linear gains (MTEB via pytrec_eval), queries with no positive grade excluded."""
    ndcgs, predictions, excluded = [], [], 0
    for ids, sims, grades in queries:
        sims, gains = np.asarray(sims, dtype=float), np.clip(np.asarray(grades, dtype=float), 0, None)
        order = _ranking_order(sims, ids)
        predictions.append([ids[i] for i in order])
        if not gains.any():
            excluded += 1
            continue
        ndcgs.append(_ndcg_ranked(gains, order, 10))
    if not ndcgs:
        raise CannotScore("no query has a document with a positive grade")
    value = float(np.mean(ndcgs))
    return {"main_score": value, "ndcg_at_10": value, "n": len(ndcgs), "excluded_queries": excluded}, predictions


def kmeans_partition(embeddings: np.ndarray, k: int, seed: int = SEED) -> np.ndarray:
    """mteb ClusteringEvaluator: MiniBatchKMeans(k, batch_size=500, n_init="auto", random_state=seed)."""
    model = MiniBatchKMeans(n_clusters=k, batch_size=KMEANS_BATCH_SIZE, n_init="auto", random_state=seed)
    return model.fit(np.asarray(embeddings, dtype=np.float64)).labels_


def agglomerative_partition(distances: np.ndarray, k: int) -> np.ndarray:
    """SAGE A.5: complete-linkage agglomerative clustering on the metric's distances (1 − similarity)."""
    model = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="complete")
    return model.fit(np.asarray(distances, dtype=np.float64)).labels_


def cosine_distances(embeddings: np.ndarray) -> np.ndarray:
    return np.clip(skm.pairwise.cosine_distances(np.asarray(embeddings, dtype=np.float64)), 0, None)


def clustering(sets: Sequence[tuple[np.ndarray | None, np.ndarray, Sequence[Sequence[str]]]],
               seed: int = SEED) -> tuple[Scores, list[Any]]:
    """Per item (a set of texts): k = the reference's number of clusters, as MTEB; V-measure averaged.

    sets: (embeddings or None for a pair scorer, distance matrix, reference partitions). Against gold there
    is one reference; against the humans, each annotator's partition is one, and the item's figure is
    their mean. Encoders get k-means (MTEB, the main score) and agglomerative (SAGE, second figure);
    pair scorers only agglomerative, which is then the main score.
    """
    kmeans_scores, agglo_scores, predictions = [], [], []
    for embeddings, distances, references in sets:
        km, ag, shown = [], [], None
        for reference in references:
            codes = np.unique(np.asarray(reference), return_inverse=True)[1]
            k = int(codes.max()) + 1
            if k < 2 or k >= len(codes):
                continue
            agglo = agglomerative_partition(distances, k)
            ag.append(float(skm.v_measure_score(codes, agglo)))
            if embeddings is not None:
                labels = kmeans_partition(embeddings, k, seed)
                km.append(float(skm.v_measure_score(codes, labels)))
                shown = shown if shown is not None else labels
            shown = shown if shown is not None else agglo
        if ag:
            agglo_scores.append(float(np.mean(ag)))
        if km:
            kmeans_scores.append(float(np.mean(km)))
        predictions.append([str(int(c)) for c in shown] if shown is not None else None)
    if not agglo_scores:
        raise CannotScore("no set has a reference with between 2 and n − 1 clusters")
    agglo = float(np.mean(agglo_scores))
    kmeans = float(np.mean(kmeans_scores)) if kmeans_scores else None
    return ({"main_score": kmeans if kmeans is not None else agglo, "v_measure": kmeans,
             "v_measure_agglomerative": agglo, "n": len(agglo_scores)}, predictions)


def classification(embeddings: np.ndarray, labels: Sequence[str], seed: int = SEED,
                   folds: int = CV_FOLDS) -> tuple[Scores, list[str]]:
    """MTEB's logistic regression (max_iter=100) with its cross-validation (KFold, shuffled, seed 42),
    used when the task has no train split: each item is predicted by a model trained on the other folds.
    Scores are pooled over the out-of-fold predictions: accuracy, macro F1, weighted F1.
    """
    y = np.asarray(labels, dtype=object)
    if len(set(y)) < 2:
        raise CannotScore("classification needs at least two labels among the items")
    folds = min(folds, len(y))
    if folds < 2:
        raise CannotScore("classification needs at least two items")
    predicted = np.empty(len(y), dtype=object)
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(embeddings):
        if len(set(y[train])) < 2:
            predicted[test] = y[train][0]
            continue
        model = LogisticRegression(max_iter=100).fit(embeddings[train], y[train])
        predicted[test] = model.predict(embeddings[test])
    truth, pred = y.astype(str), predicted.astype(str)
    accuracy = float(skm.accuracy_score(truth, pred))
    return ({"main_score": accuracy, "accuracy": accuracy,
             "f1": float(skm.f1_score(truth, pred, average="macro", zero_division=0)),
             "f1_weighted": float(skm.f1_score(truth, pred, average="weighted", zero_division=0)),
             "n": len(y), "cv_folds": folds, "seed": seed}, list(pred))


def pairwise(sim_a: Sequence[float], sim_b: Sequence[float], truth: Sequence[str]) -> tuple[Scores, list[str]]:
    """SAGE: the candidate more similar to the context is predicted preferred (equal: tie).
    Accuracy, and macro precision/recall/F1 over the choices present (sklearn, zero_division=0)."""
    a, b = np.asarray(sim_a, dtype=float), np.asarray(sim_b, dtype=float)
    pred = np.where(a > b, "a", np.where(b > a, "b", "tie")).tolist()
    accuracy = float(skm.accuracy_score(truth, pred))
    p, r, f, _ = skm.precision_recall_fscore_support(truth, pred, average="macro", zero_division=0)
    return ({"main_score": accuracy, "accuracy": accuracy, "precision": float(p), "recall": float(r),
             "f1": float(f), "n": len(truth)}, pred)


def likert(similarities: Sequence[float], ratings: dict[str, Sequence[float | None]]) -> tuple[Scores, list[float]]:
    """Pearson of similarity(context, text) with the ratings, per axis; SAGE's 0.5·(r + 1); main = mean."""
    sims = np.asarray(similarities, dtype=float)
    per_axis: dict[str, Any] = {}
    for axis, values in ratings.items():
        v = np.array([np.nan if x is None else x for x in values], dtype=float)
        keep = ~np.isnan(v)
        r = _correlation(stats.pearsonr, v[keep], sims[keep])
        per_axis[axis] = {"pearson": r, "sage": None if r is None else 0.5 * (r + 1.0), "n": int(keep.sum())}
    sage = [a["sage"] for a in per_axis.values() if a["sage"] is not None]
    main = float(np.mean(sage)) if sage else None
    return {"main_score": main, "axes": per_axis, "n": len(sims)}, [float(s) for s in sims]
