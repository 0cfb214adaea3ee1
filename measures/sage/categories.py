"""The five SAGE category formulas (SAGE, arXiv:2509.21310, Appendix A.2-A.6): numpy arrays in, numbers out.

Nothing here calls a model: each function takes the similarities already computed, so it can be checked
by hand. `agreement.sage.study` computes the similarities and calls these.

How Table 1 is made of the subtables, read off the paper's own numbers (tests/test_sage_categories.py
reproduces every row of Table 1 from Tables 2-6):
- Human Pref. = mean(pairwise F1 of Table 2, mean of the four mapped axis correlations of Table 3);
- Robustness = mean over datasets of Table 4;
- Sensitivity = mean(mean of Table 5 over datasets, mean of Table 6 over datasets);
- Overall = the unweighted mean of the five categories (§3).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
from scipy import stats
from sklearn import metrics as skm
from sklearn.cluster import AgglomerativeClustering

ArrayLike = npt.ArrayLike
CATEGORIES = ("clustering", "human_preference", "robustness", "sensitivity", "retrieval")


# ---------------------------------------------------------------------------------------------
# A.2 Human preference alignment

def pairwise_preference(sim_a: ArrayLike, sim_b: ArrayLike, preferred_a: ArrayLike) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of "the summary more similar to the source is preferred" (A.2).

    A.2: "assign the preference to summary 1 if it has higher similarity than summary 2, otherwise to
    summary 2": a tie in similarity predicts summary 2. The positive class is "summary 1 (a) preferred".
    `preferred_a` is the humans' choice (True = a). Comparisons the humans called a tie are left out by
    the caller (a binary prediction cannot match them).
    """
    a, b = np.asarray(sim_a, dtype=float), np.asarray(sim_b, dtype=float)
    truth = np.asarray(preferred_a, dtype=bool)
    if not (a.shape == b.shape == truth.shape) or a.ndim != 1 or a.size == 0:
        raise ValueError("pairwise_preference needs three non-empty 1-d arrays of one length")
    predicted = a > b
    precision, recall, f1, _ = skm.precision_recall_fscore_support(
        truth, predicted, average="binary", pos_label=True, zero_division=0.0
    )
    return {"accuracy": float(skm.accuracy_score(truth, predicted)), "precision": float(precision),
            "recall": float(recall), "f1": float(f1)}


def mapped_pearson(similarities: ArrayLike, ratings: ArrayLike) -> float | None:
    """0.5 · (r + 1) of Pearson's r between similarity(summary, source) and a rating axis (A.2).

    Maps r from [-1, 1] to [0, 1]; 0.5 is "no correlation". None when r is undefined (fewer than two
    items, or constant similarities or ratings).
    """
    x, y = np.asarray(similarities, dtype=float), np.asarray(ratings, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("mapped_pearson needs two 1-d arrays of one length")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return 0.5 * (float(stats.pearsonr(x, y).statistic) + 1.0)


def human_preference(pairwise_f1: float | None, axis_scores: Mapping[str, float | None]) -> float | None:
    """The category: mean of the pairwise F1 and the mean mapped correlation over the axes (Table 1)."""
    axes = [v for v in axis_scores.values() if v is not None]
    parts = [p for p in (pairwise_f1, float(np.mean(axes)) if axes else None) if p is not None]
    return float(np.mean(parts)) if parts else None


# ---------------------------------------------------------------------------------------------
# A.3 Transformation robustness

def robustness(summary: ArrayLike, superficial: ArrayLike, semantic: ArrayLike) -> dict[str, float]:
    """The three ordinal relations of A.3 and their average, over n documents.

    `summary`: sim(original, summary), shape (n,); `superficial` and `semantic`: sim(original, perturbed),
    shape (n, 3), one column per perturbation. Strict inequalities, as "exceeds":
    - summary_over_semantic: the summary's similarity exceeds every semantic alteration's;
    - superficial_over_summary: every superficial perturbation's similarity exceeds the summary's;
    - superficial_over_semantic: every superficial similarity exceeds every semantic one.
    Each relation is the share of documents where it holds; the score is their mean.
    """
    s = np.asarray(summary, dtype=float)
    sup, sem = np.atleast_2d(np.asarray(superficial, dtype=float)), np.atleast_2d(np.asarray(semantic, dtype=float))
    if s.ndim != 1 or s.size == 0 or sup.shape[0] != s.size or sem.shape[0] != s.size:
        raise ValueError("robustness needs n summary similarities and n rows of perturbed similarities")
    relations = {
        "summary_over_semantic": float(np.mean(s > sem.max(axis=1))),
        "superficial_over_summary": float(np.mean(sup.min(axis=1) > s)),
        "superficial_over_semantic": float(np.mean(sup.min(axis=1) > sem.max(axis=1))),
    }
    return {**relations, "score": float(np.mean(list(relations.values())))}


def mean_over_datasets(scores: Mapping[str, float]) -> float | None:
    """A category from its per-dataset subtable (Table 4 → Table 1; clustering and retrieval alike): the plain mean."""
    return float(np.mean(list(scores.values()))) if scores else None


# ---------------------------------------------------------------------------------------------
# A.4 Information sensitivity

def expected_similarity(proportion: ArrayLike) -> npt.NDArray[np.float64]:
    """A.4's theoretical similarity after perturbing a proportion p of the text: 1 − p / (1 + p)."""
    p = np.asarray(proportion, dtype=float)
    return 1.0 - p / (1.0 + p)


def sensitivity(observed: ArrayLike, proportions: ArrayLike) -> float:
    """1 − MAE between observed similarities and 1 − p/(1 + p) (A.4).

    `observed`: sim(original, perturbed), shape (n documents, m perturbations); `proportions`: the p of each
    of the m perturbations. The MAE runs over every (document, perturbation) cell.
    """
    obs = np.atleast_2d(np.asarray(observed, dtype=float))
    p = np.asarray(proportions, dtype=float)
    if obs.size == 0 or obs.shape[-1] != p.size:
        raise ValueError("sensitivity needs one column of observed similarities per proportion")
    return float(1.0 - np.mean(np.abs(obs - expected_similarity(p))))


def sensitivity_category(insertion: Mapping[str, float], removal: Mapping[str, float]) -> float | None:
    """Table 1's Sensitivity: the mean of the insertion mean (Table 5) and the removal mean (Table 6)."""
    if not insertion or not removal:
        return None
    return float(np.mean([np.mean(list(insertion.values())), np.mean(list(removal.values()))]))


# ---------------------------------------------------------------------------------------------
# A.5 Clustering

def clustering_v_measure(similarity_matrix: ArrayLike, labels: Sequence[object]) -> float:
    """V-measure of complete-linkage agglomerative clustering on distance = 1 − similarity (A.5).

    The number of clusters is the number of gold categories. Similarities are symmetrised and the diagonal
    set to distance 0, so a metric that is not exactly symmetric still gives a valid distance matrix.
    """
    sim = np.asarray(similarity_matrix, dtype=float)
    n = len(labels)
    if sim.shape != (n, n) or n < 2:
        raise ValueError("clustering needs an n × n similarity matrix for n ≥ 2 labelled texts")
    distance = 1.0 - (sim + sim.T) / 2.0
    np.fill_diagonal(distance, 0.0)
    k = len(set(labels))
    if k == 1 or k == n:
        predicted = np.zeros(n, dtype=int) if k == 1 else np.arange(n)
    else:
        model = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="complete")
        predicted = model.fit_predict(distance)
    return float(skm.v_measure_score(list(labels), predicted))


# ---------------------------------------------------------------------------------------------
# A.6 Retrieval robustness

def retention_harmonic_mean(original_ndcg: float, perturbed_ndcg: Sequence[float]) -> float:
    """Harmonic mean of nDCG@10(perturbed) / nDCG@10(original) over the perturbed corpora (A.6).

    A retention of 0 makes the harmonic mean 0 (its limit), as the paper's "penalize poor performance on
    any single transformation" intends. An original nDCG of 0 leaves retention undefined: ValueError.
    """
    if not original_ndcg > 0:
        raise ValueError("retention is undefined when the clean corpus scores nDCG@10 = 0")
    ratios = np.asarray(perturbed_ndcg, dtype=float) / original_ndcg
    if ratios.size == 0:
        raise ValueError("retention needs at least one perturbed corpus")
    if np.any(ratios == 0):
        return 0.0
    return float(stats.hmean(ratios))


# ---------------------------------------------------------------------------------------------
# Table 1

def overall(scores: Mapping[str, float | None]) -> float | None:
    """The Overall SAGE score: the unweighted mean of the category scores that exist (§3)."""
    present = [v for v in scores.values() if v is not None and not math.isnan(v)]
    return float(np.mean(present)) if present else None
