"""How a model is scored on each task kind, following MTEB's evaluators (mteb 2.20.0, see
docs/models-in-app.md). Pure: numpy in, dicts of floats out, no Django (docs/style.md).

Each function returns (scores, predictions): `scores` has a `main_score` and the named figures;
`predictions[i]` is the model's output for item i (what it would have answered), kept for the item table.
Undefined figures (constant input, a single class) are None, never NaN, as in measures/metrics.py.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from sklearn import metrics as skm
from sklearn.cluster import AgglomerativeClustering, MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from measures import trec_scoring

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


MAP_DEPTH = 1000  # mteb AbsTaskRetrieval k_values' largest: reranking's main score is map_at_1000


def _rank_and_score(queries: Sequence[tuple[Sequence[str], Sequence[float], Sequence[float]]]
                    ) -> tuple[trec_scoring.Scores, list[list[str]]]:
    """Each query's documents ranked by similarity (ties by id descending, as pytrec_eval) and scored by the
    app's one ranking scorer (measures/trec_scoring.py), against relevance ≥ 1 as pytrec_eval's default."""
    run, qrels, predictions = {}, {}, []
    for n, (ids, sims, relevance) in enumerate(queries):
        ranked = trec_scoring.order_like_trec_eval({d: float(s) for d, s in zip(ids, sims, strict=True)})
        predictions.append(ranked)
        scored = dict(zip(ids, sims, strict=True))
        run[str(n)] = {d: float(scored[d]) for d in ranked[:MAP_DEPTH]}
        qrels[str(n)] = {d: max(float(r), 0.0) for d, r in zip(ids, relevance, strict=True)}
    # MAP is over the whole (cut) ranking whatever the cut-offs; asking only for 10 keeps the arrays as wide as
    # the longest ranking, not 1,000.
    return trec_scoring.evaluate_dicts(run, qrels, threshold=1.0, ks=(10,)), predictions


def reranking(queries: Sequence[tuple[Sequence[str], Sequence[float], Sequence[float]]]) -> tuple[Scores, list[Any]]:
    """MTEB 2.x reranking (AbsTaskRetrieval over each query's candidates): map_at_1000 (main), mrr_at_10,
    ndcg_at_10. queries: (candidate ids, similarities, 0/1 relevance) per query. A query with no relevant
    candidate is averaged in as 0, as pytrec_eval and MTEB do, and counted."""
    if not queries:
        raise CannotScore("no query to rank")
    scores, predictions = _rank_and_score(queries)
    value = float(scores.map)
    return ({"main_score": value, "map_at_1000": value, "mrr_at_10": scores.at("mrr", 10),
             "ndcg_at_10": scores.at("ndcg", 10), "n": scores.queries,
             "n_queries_without_relevant": scores.queries_without_relevant}, predictions)


def graded_relevance(queries: Sequence[tuple[Sequence[str], Sequence[float], Sequence[float]]]
                     ) -> tuple[Scores, list[Any]]:
    """MTEB retrieval's main score, nDCG@10 with trec_eval's linear gains (pytrec_eval), and Recall@10
    (grade ≥ 1). A query with no positive grade is averaged in as 0 and counted."""
    if not queries:
        raise CannotScore("no query to rank")
    scores, predictions = _rank_and_score(queries)
    value = scores.at("ndcg", 10)
    return ({"main_score": value, "ndcg_at_10": value, "recall_at_10": scores.at("recall", 10),
             "n": scores.queries, "n_queries_without_relevant": scores.queries_without_relevant}, predictions)


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


MIN_CORRELATION_PAIRS = 5  # a Spearman or Pearson over fewer pairs says next to nothing


def thin_labels(truth: Sequence[Any], folds: int = CV_FOLDS) -> str | None:
    """Why a classification score over these labels is too thin to compare or rank (None: enough): each of the
    `folds` cross-validation folds must be able to hold out every label, so each label needs at least `folds`
    items (an 8-item task with 1–2 items per label scored 0.000)."""
    if truth:
        label, fewest = min(Counter(str(value) for value in truth).items(), key=lambda pair: (pair[1], pair[0]))
        if fewest < folds:
            return (f"{len(truth)} items, {fewest} with the label {label!r}: {folds}-fold cross-validation needs at "
                    f"least {folds} items of each label")
    return None


def thin_correlation(truth: Sequence[Any]) -> str | None:
    """Why a correlation over these pairs is too thin to compare or rank (None: enough)."""
    if len(truth) < MIN_CORRELATION_PAIRS:
        return f"a correlation over {len(truth)} pair(s): fewer than {MIN_CORRELATION_PAIRS}"
    return None


CLASSIFICATION_PROTOCOLS = ("mteb", "pooled")
SAMPLES_PER_LABEL = 8  # mteb AbsTaskClassification.samples_per_label


def _classification_figures(truth: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """mteb AbsTaskClassification._calculate_scores (sklearn; an undefined precision counts 0, as its warning does).
    MTEB's `ap` (average precision of the predicted labels, for a fold whose test labels happen to be two) is
    not reported."""
    figures = {"accuracy": float(skm.accuracy_score(truth, pred))}
    for name, fn in (("f1", skm.f1_score), ("precision", skm.precision_score), ("recall", skm.recall_score)):
        figures[name] = float(fn(truth, pred, average="macro", zero_division=0))
        figures[f"{name}_weighted"] = float(fn(truth, pred, average="weighted", zero_division=0))
    return figures


def _fit_predict(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, seed: int) -> np.ndarray:
    """MTEB's evaluator model, LogisticRegression(max_iter=100) with random_state = the task's seed. A training
    set of one label (MTEB would stop with sklearn's error) predicts that label."""
    if len(set(train_y.tolist())) < 2:
        return np.full(len(test_x), train_y[0])
    model = LogisticRegression(max_iter=100, random_state=seed).fit(train_x, train_y)
    return model.predict(test_x)


def _undersample(labels: np.ndarray, shuffled: list[int], seed: int, per_label: int) -> list[int]:
    """mteb AbsTaskClassification._undersample_data: shuffle the index list in place with
    RandomState(seed) (a fresh one each call, on the list the previous fold left), then keep the first
    `per_label` indexes of each label in that order."""
    np.random.RandomState(seed).shuffle(shuffled)
    counts: dict[int, int] = {}
    kept = []
    for i in shuffled:
        if counts.get(int(labels[i]), 0) < per_label:
            kept.append(i)
            counts[int(labels[i])] = counts.get(int(labels[i]), 0) + 1
    return kept


def classification(embeddings: np.ndarray, labels: Sequence[str], seed: int = SEED, folds: int = CV_FOLDS,
                   protocol: str = "mteb", samples_per_label: int = SAMPLES_PER_LABEL) -> tuple[Scores, list[str]]:
    """Cross-validated logistic regression on the items (a study has no train split), by `protocol`:

    - "mteb" (default), mteb 2.20.0 AbsTaskClassification with `is_cross_validation`
      (`_evaluate_subset_cross_validation`): KFold(5, shuffle=True, random_state=seed) over the items; each
      training fold undersampled to `samples_per_label` (8) items per label (`_undersample`); the figures
      are computed per fold and their **mean** is reported. Labels are coded 0..n−1 in sorted order, as
      integer labels of an MTEB dataset.
    - "pooled": the app's option for tiny studies: the whole training fold, no undersampling, one set of
      figures over the pooled out-of-fold predictions.

    Each item's prediction is the one made for it in the fold that held it out (both protocols).
    """
    if protocol not in CLASSIFICATION_PROTOCOLS:
        raise ValueError(f"classification protocol must be one of {', '.join(CLASSIFICATION_PROTOCOLS)}")
    names, y = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    if len(names) < 2:
        raise CannotScore("classification needs at least two labels among the items")
    folds = min(folds, len(y))
    if folds < 2:
        raise CannotScore("classification needs at least two items")
    x = np.asarray(embeddings)
    predicted = np.empty(len(y), dtype=np.int64)
    per_fold, shuffled = [], None
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(range(len(y))):
        if protocol == "mteb":
            shuffled = list(range(len(train))) if shuffled is None else shuffled
            train = train[_undersample(y[train], shuffled, seed, samples_per_label)]
        predicted[test] = _fit_predict(x[train], y[train], x[test], seed)
        per_fold.append(_classification_figures(y[test], predicted[test]))
    if protocol == "mteb":
        figures = {k: float(np.mean([f[k] for f in per_fold])) for k in per_fold[0]}
    else:
        figures = _classification_figures(y, predicted)
    described = {"protocol": protocol, "cv_folds": folds, "seed": seed, "averaging": (
        "mean of the per-fold figures" if protocol == "mteb" else "pooled out-of-fold predictions")}
    if protocol == "mteb":
        described["samples_per_label"] = samples_per_label
    return ({"main_score": figures["accuracy"], **figures, "n": len(y), **described},
            [str(names[p]) for p in predicted])


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
