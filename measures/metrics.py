"""Pure metric functions of the agreement app: numpy arrays and lists in, floats and tuples out.

No Django import here (docs/style.md): this is the code most worth reading in isolation and testing
against published worked examples (tests/test_metrics_*.py cite them).

Conventions
- Rating matrices are items × raters (rows are items, as in statsmodels); a missing rating is NaN
  for numbers and -1 for the integer category codes made by `encode_labels`.
- Scores are on a 0..1 scale; the HUME paper prints them ×100.
- A value that is mathematically undefined is None, never NaN (reports are JSON). Every public
  metric is a `Metric`: calling it gives `float | None`, and `.explain(...)` gives
  `(value, reason)` from the same code path, so a report can say *why* a value is missing.
- This module holds agreement coefficients, label and partition scores, correlations, bands and
  the validity flag; confidence intervals are in `intervals`, ranking metrics in `ranking`, the
  `Metric` wrapper in `metric_base` (all re-exported here).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats
from sklearn import metrics as skm
from statsmodels.stats.inter_rater import fleiss_kappa as _statsmodels_fleiss_kappa

# The split modules, re-exported so `from measures import metrics as m; m.wilson_interval` keeps working.
from measures.intervals import annotator_range as annotator_range
from measures.intervals import bootstrap_interval as bootstrap_interval
from measures.intervals import fisher_z_interval as fisher_z_interval
from measures.intervals import spearman_interval as spearman_interval
from measures.intervals import wilson_interval as wilson_interval
from measures.metric_base import SINGLE_ANNOTATOR as SINGLE_ANNOTATOR
from measures.metric_base import FloatArray as FloatArray
from measures.metric_base import IntArray as IntArray
from measures.metric_base import Interval as Interval
from measures.metric_base import Metric as Metric
from measures.metric_base import Undefined as Undefined
from measures.metric_base import is_constant, metric, require_two_raters
from measures.metric_base import partition_codes as partition_codes
from measures.ranking import average_precision as average_precision
from measures.ranking import mean_over_queries as mean_over_queries
from measures.ranking import ndcg_at_k as ndcg_at_k
from measures.ranking import ranked_average_precision as ranked_average_precision
from measures.ranking import ranked_mean as ranked_mean
from measures.ranking import ranked_ndcg_at_k as ranked_ndcg_at_k
from measures.ranking import ranked_reciprocal_rank as ranked_reciprocal_rank
from measures.ranking import recall_at_k as recall_at_k
from measures.ranking import reciprocal_rank as reciprocal_rank

Level = Literal["nominal", "ordinal", "interval"]
Family = Literal["chance", "correlation"]

LOW_AGREEMENT_MESSAGE = "low agreement: model scores above the human level may reflect label artifacts"
# HUME §5.3 (docs/reports.md): κ-like (chance-corrected) agreement below 0.4 or a correlation below 0.6.
LOW_AGREEMENT_THRESHOLDS: dict[str, float] = {"chance": 0.4, "correlation": 0.6}
_BANDS: dict[str, tuple[tuple[float, str], ...]] = {
    "chance": ((0.8, "excellent"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair")),
    "correlation": ((0.7, "strong"), (0.4, "moderate")),
}
_LOWEST_BAND = {"chance": "poor", "correlation": "weak"}

# ---------------------------------------------------------------- label tables


def encode_labels(
    values: Sequence[Hashable | None], categories: Iterable[Hashable] = ()
) -> tuple[IntArray, list[Hashable]]:
    """Encode labels as integer codes (-1 = None: missing or skipped); reshape as needed.

    Categories are sorted by their text, so code order is lexicographic order and the lowest code
    wins a majority-vote tie (docs/metrics.md: "a tie goes to the lexicographically first label").
    """
    seen = (set(values) | set(categories)) - {None}
    ordered = sorted(seen, key=lambda c: (str(c), type(c).__name__))
    index: dict[Hashable | None, int] = {c: i for i, c in enumerate(ordered)}
    index[None] = -1
    codes = np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
    return codes, ordered


def count_table(codes: npt.ArrayLike, n_categories: int) -> IntArray:
    """Items × categories table of how many raters chose each category (the Fleiss layout).

    Vectorised with bincount: statsmodels' aggregate_raters loops over rows in Python and has no
    notion of a missing rating, which our overlap-k batches always have.
    """
    c = np.asarray(codes, dtype=np.int64)
    rows = np.broadcast_to(np.arange(c.shape[0])[:, None], c.shape)
    keep = c >= 0
    flat = rows[keep] * n_categories + c[keep]
    counts = np.bincount(flat, minlength=c.shape[0] * n_categories)
    return counts.reshape(c.shape[0], n_categories)


def majority_vote(table: npt.ArrayLike, rng: np.random.Generator | None = None) -> IntArray:
    """Winning category code per item; -1 for items nobody answered.

    Ties go to the lowest code (the lexicographically first label), or, given `rng`, to one of the
    tied categories drawn uniformly: a U[0, 1) jitter on the tied maxima of integer counts cannot
    lift any other category above them.
    """
    t = np.asarray(table)
    if t.shape[1] == 0:
        return np.full(t.shape[0], -1, dtype=np.int64)
    if rng is not None:
        t = t + rng.random(t.shape) * (t == t.max(axis=1, keepdims=True))
    winner = t.argmax(axis=1).astype(np.int64)
    winner[np.asarray(table).sum(axis=1) == 0] = -1
    return winner


def tied_items(table: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Items whose top count is shared by two or more categories (a majority-vote tie)."""
    t = np.asarray(table)
    if t.shape[1] == 0:
        return np.zeros(t.shape[0], dtype=bool)
    top = t.max(axis=1, keepdims=True)
    return ((t == top).sum(axis=1) >= 2) & (top[:, 0] > 0)


def fleiss_rows(table: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Rows Fleiss' κ is computed on: those with the most common rater count m ≥ 2.

    Fleiss (1971) assumes every subject has the same number of ratings; with overlap-k batches a
    few items get fewer, so we keep the largest equal-count subset rather than crash.
    """
    m = np.rint(np.asarray(table).sum(axis=1)).astype(np.int64)
    frequency = np.bincount(np.where(m >= 2, m, 0))
    frequency[:2] = 0
    if not frequency.any():
        return np.zeros(m.shape, dtype=bool)
    modal = len(frequency) - 1 - int(np.argmax(frequency[::-1]))  # tie → the larger m
    return m == modal


# ---------------------------------------------------------------- agreement among raters


@metric
def fleiss_kappa(table: npt.ArrayLike) -> float:
    """Fleiss' κ (Fleiss 1971) on an items × categories count table (statsmodels)."""
    t = np.asarray(table, dtype=float)
    t = t[fleiss_rows(t)]
    if t.size == 0:
        raise Undefined("n/a: no item was rated by two annotators")
    p = t.sum(axis=0) / t.sum()
    if math.isclose(float((p * p).sum()), 1.0):
        raise Undefined("undefined: all answers are one category (chance agreement is 1)")
    return float(_statsmodels_fleiss_kappa(t))


@metric
def percent_agreement(table: npt.ArrayLike) -> float:
    """Mean share of agreeing rater pairs per item (the P̄ of Fleiss 1971; with 2 raters, the
    share of items on which they agree — HUME's "mean percentage agreement")."""
    t = np.asarray(table, dtype=float)
    m = t.sum(axis=1)
    t, m = t[m >= 2], m[m >= 2]
    if m.size == 0:
        raise Undefined("n/a: no item was rated by two annotators")
    return float(((t * (t - 1)).sum(axis=1) / (m * (m - 1))).mean())


@metric
def cohen_kappa_mean(codes: npt.ArrayLike) -> float:
    """Mean over rater pairs of Cohen's κ (sklearn) on the items both rated (-1 = missing)."""
    c = np.asarray(codes, dtype=np.int64)
    require_two_raters(c)
    values = []
    for i, j in itertools.combinations(range(c.shape[1]), 2):
        both = (c[:, i] >= 0) & (c[:, j] >= 0)
        a, b = c[both, i], c[both, j]
        if a.size and not (is_constant(a) and is_constant(b) and a[0] == b[0]):
            values.append(skm.cohen_kappa_score(a, b))
    if not values:
        raise Undefined("undefined: all answers are one category (chance agreement is 1)")
    return float(np.mean(values))


@metric
def krippendorff_alpha(
    ratings: npt.ArrayLike, level: Level = "nominal", value_domain: Sequence[float] | None = None
) -> float:
    """Krippendorff's α on an items × raters float matrix with NaN for missing ratings.

    Ordinal goes through the `krippendorff` package with an explicit, bounded value domain (the
    observed values, or the task's scale steps). Nominal and interval use linear-time closed
    forms (`_nominal_alpha`, `_interval_alpha`, tested against the package): the package builds
    items × values × values arrays, quadratic in the number of distinct values (its issue #38) —
    continuous sliders have many, and 100k items × 28 labels would need gigabytes.
    """
    r = np.asarray(ratings, dtype=float)
    require_two_raters(r)
    r = r[(~np.isnan(r)).sum(axis=1) >= 2]
    observed = np.unique(r[~np.isnan(r)])
    if r.shape[0] == 0:
        raise Undefined("n/a: no item was rated by two annotators")
    if observed.size < 2:
        raise Undefined("undefined: all ratings are identical (no expected disagreement)")
    if level == "interval":
        return _interval_alpha(r)
    domain = observed if value_domain is None else np.asarray(value_domain, dtype=float)
    if not np.isin(observed, domain).all():
        raise ValueError("ratings contain values outside value_domain")
    counts = count_table(np.where(np.isnan(r), -1, np.searchsorted(domain, r)), domain.size)
    if level == "nominal":
        return _nominal_alpha(counts)
    return float(krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level))


def _nominal_alpha(counts: IntArray) -> float:
    """Nominal α = 1 − D_o/D_e from an items × values count table of pairable items.

    A unit with m values of which n_c equal c has m² − Σn_c² ordered disagreeing pairs, weighted
    1/(m−1); chance has n² − Σn_c² over all n pairable values: α = 1 − (n−1)·Σ_u[…]/(n² − Σn_c²).
    """
    c = counts.astype(float)
    m_u = c.sum(axis=1)
    observed = ((m_u * m_u - (c * c).sum(axis=1)) / (m_u - 1)).sum()
    n_c = c.sum(axis=0)
    n = n_c.sum()
    return float(1.0 - (n - 1) * observed / (n * n - (n_c * n_c).sum()))


def _interval_alpha(r: FloatArray) -> float:
    """Interval α = 1 − D_o/D_e with squared differences summed through value sums.

    Σ_{i≠j}(v_i − v_j)² over the m values of a unit equals 2(m·Σv² − (Σv)²), so both the observed
    (within-unit, weighted 1/(m−1)) and the expected (all pairable values) disagreement are
    linear in the data: α = 1 − (n−1)·Σ_u[(m_u Σv² − (Σv)²)/(m_u−1)] / (n·Σv² − (Σv)²).
    """
    r = r - np.nanmean(r)  # α is shift-invariant; centring keeps the sums well conditioned
    m = (~np.isnan(r)).sum(axis=1)
    s1, s2 = np.nansum(r, axis=1), np.nansum(r * r, axis=1)
    observed = ((m * s2 - s1 * s1) / (m - 1)).sum()
    n = m.sum()
    expected = n * s2.sum() - s1.sum() ** 2
    return float(1.0 - (n - 1) * observed / expected)


@metric
def spearman_mean(ratings: npt.ArrayLike) -> float:
    """Mean over rater pairs of Spearman's ρ on co-rated items (HUME's STS/reranking agreement)."""
    return _pairwise_correlation(ratings, _spearman)


@metric
def kendall_mean(ratings: npt.ArrayLike) -> float:
    """Mean over rater pairs of Kendall's τ-b on co-rated items."""
    return _pairwise_correlation(ratings, kendall_tau)


@metric
def pearson_mean(ratings: npt.ArrayLike) -> float:
    """Mean over rater pairs of Pearson's r on co-rated items."""
    return _pairwise_correlation(ratings, lambda x, y: float(stats.pearsonr(x, y).statistic))


def _pairwise_correlation(ratings: npt.ArrayLike, fn: Callable[[FloatArray, FloatArray], float]) -> float:
    """Average `fn` over rater pairs, skipping pairs where it is undefined (constant ratings)."""
    r = np.asarray(ratings, dtype=float)
    require_two_raters(r)
    values = []
    for i, j in itertools.combinations(range(r.shape[1]), 2):
        both = ~np.isnan(r[:, i]) & ~np.isnan(r[:, j])
        x, y = r[both, i], r[both, j]
        if x.size >= 2 and not is_constant(x) and not is_constant(y):
            values.append(fn(x, y))
    if not values:
        raise Undefined("undefined: constant ratings (or < 2 shared items) for every annotator pair")
    return float(np.mean(values))


def grouped_correlation(
    ratings: npt.ArrayLike, bounds: Sequence[int], fn: Callable[[FloatArray, FloatArray], float]
) -> tuple[float | None, int, int]:
    """Per group of rows (a query's candidates, rows bounds[g]:bounds[g+1]), the mean of `fn` over
    rater pairs, then the mean over groups: HUME's reranking agreement, Spearman/Kendall per query.

    A pair is skipped on a query where either rater's judgments are constant (the correlation is
    undefined); a query with no defined pair is left out. Returns (mean, queries used, left out).
    """
    r = np.asarray(ratings, dtype=float)
    require_two_raters(r)
    means, left_out = [], 0
    for lo, hi in itertools.pairwise(bounds):
        block = r[lo:hi]
        if np.isnan(block).all(axis=0).sum() > r.shape[1] - 2:
            continue  # fewer than two raters judged this query: not a query of the agreement
        try:
            means.append(_pairwise_correlation(block, fn))
        except Undefined:
            left_out += 1
    return (float(np.mean(means)) if means else None), len(means), left_out


def spearman_rho(x: FloatArray, y: FloatArray) -> float:
    """Spearman's ρ (scipy) of two defined, non-constant vectors."""
    return float(stats.spearmanr(x, y).statistic)


def kendall_tau(x: FloatArray, y: FloatArray) -> float:
    """Kendall's τ-b (scipy) of two defined, non-constant vectors."""
    return float(stats.kendalltau(x, y).statistic)


def ari_pairs(partitions: Sequence[Sequence[Hashable]]) -> list[float]:
    """ARI (sklearn) of every pair of annotators' partitions of the same set of texts."""
    coded = [partition_codes(p) for p in partitions]
    return [float(skm.adjusted_rand_score(a, b)) for a, b in itertools.combinations(coded, 2)]


@metric
def ari_mean(partitions: Sequence[Sequence[Hashable]]) -> float:
    """Mean pairwise ARI between annotators' partitions (HUME's clustering agreement)."""
    if len(partitions) < 2:
        raise Undefined(SINGLE_ANNOTATOR)
    return float(np.mean(ari_pairs(partitions)))


# ---------------------------------------------------------------- against gold: labels and partitions


def _labels_metric(fn: Callable[..., Any], **kwargs: Any) -> Metric[[Sequence[Hashable], Sequence[Hashable]], float]:
    """Wrap an sklearn (y_true, y_pred) metric so that empty input is Undefined, not an error."""

    def compute(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
        if len(y_true) == 0:
            raise Undefined("undefined: no scored items")
        if len(y_true) != len(y_pred):
            raise ValueError("y_true and y_pred differ in length")
        return float(fn(y_true, y_pred, **kwargs))

    compute.__doc__ = f"sklearn {fn.__name__}{kwargs or ''} on gold (y_true) vs answers (y_pred)."
    return Metric(compute)


accuracy = _labels_metric(skm.accuracy_score)
f1_macro = _labels_metric(skm.f1_score, average="macro", zero_division=0)
f1_weighted = _labels_metric(skm.f1_score, average="weighted", zero_division=0)
precision_macro = _labels_metric(skm.precision_score, average="macro", zero_division=0)
recall_macro = _labels_metric(skm.recall_score, average="macro", zero_division=0)
v_measure = _labels_metric(lambda t, p: skm.v_measure_score(partition_codes(t), partition_codes(p)))
adjusted_rand = _labels_metric(lambda t, p: skm.adjusted_rand_score(partition_codes(t), partition_codes(p)))
adjusted_mutual_info = _labels_metric(
    lambda t, p: skm.adjusted_mutual_info_score(partition_codes(t), partition_codes(p))
)


def label_scores(y_true: npt.ArrayLike, y_pred: npt.ArrayLike, n_categories: int) -> dict[str, float | None]:
    """accuracy, macro/weighted F1 and macro precision/recall of integer codes, from one confusion
    matrix.

    Same definitions as sklearn (averages over the labels present in y_true or y_pred,
    zero_division=0; tests compare them), but one bincount instead of one sklearn validation pass
    per metric: that is what keeps a 100k-item classification report fast.
    """
    t, p = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
    if t.size == 0:
        return dict.fromkeys(("accuracy", "f1_macro", "f1_weighted", "precision_macro", "recall_macro"))
    n = n_categories
    cm = np.bincount(t * n + p, minlength=n * n).reshape(n, n)
    tp, support, predicted = np.diag(cm).astype(float), cm.sum(axis=1), cm.sum(axis=0)
    present = (support + predicted) > 0

    def share(num: FloatArray, den: npt.NDArray[Any]) -> FloatArray:
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    f1 = share(2 * tp, support + predicted)
    return {
        "accuracy": float(tp.sum() / t.size),
        "f1_macro": float(f1[present].mean()),
        "f1_weighted": float((f1 * support).sum() / support.sum()),
        "precision_macro": float(share(tp, predicted)[present].mean()),
        "recall_macro": float(share(tp, support)[present].mean()),
    }


# ---------------------------------------------------------------- against gold: correlations


@metric
def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's ρ (scipy); undefined on constant input."""
    return _spearman(*_correlatable(x, y))


@metric
def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Pearson's r (scipy); undefined on constant input."""
    return float(stats.pearsonr(*_correlatable(x, y)).statistic)


@metric
def kendall(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Kendall's τ-b (scipy); undefined on constant input."""
    return float(stats.kendalltau(*_correlatable(x, y)).statistic)


def sage_score(r: float | None) -> float | None:
    """SAGE's mapping of a correlation to 0..1: 0.5·(r + 1)."""
    return None if r is None else 0.5 * (r + 1.0)


def _spearman(x: FloatArray, y: FloatArray) -> float:
    return float(stats.spearmanr(x, y).statistic)


def _correlatable(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError("x and y differ in length")
    if a.size < 2:
        raise Undefined("undefined: fewer than 2 scored items")
    if is_constant(a) or is_constant(b):
        raise Undefined("undefined: constant ratings")
    return a, b


# ---------------------------------------------------------------- bands and validity


def agreement_band(value: float | None, family: Family) -> str | None:
    """HUME Appendix F band: κ/α/ARI ("chance") or correlation ("correlation"); None if undefined."""
    if value is None:
        return None
    for lower, band in _BANDS[family]:
        if value > lower:
            return band
    return _LOWEST_BAND[family]


def is_low_agreement(value: float | None, family: Family) -> bool:
    """HUME §5.3 validity flag: κ < 0.4 or ρ < 0.6. An undefined value is not flagged."""
    return value is not None and value < LOW_AGREEMENT_THRESHOLDS[family]
