"""Scorers of the kinds whose answer holds one number per unit: STS, Likert, reranking and graded
relevance, all on one units × annotators matrix (`UnitScorer`). The base class and the shapes the
kinds share are in `kind_scorers`.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from agreement.kind_scorers import (
    Context,
    Disagreement,
    Explained,
    Human,
    Item,
    KindScorer,
    Scores,
    _mean,
    _mean_of_annotators,
    fleiss_note,
    pairable_note,
)
from measures import metrics as m
from measures import pairwise_kappa

# ---------------------------------------------------------------- per-(item, key) numeric kinds


class UnitScorer(KindScorer):
    """Kinds whose answer holds one number per unit: (query, candidate), (item, axis) or the item.

    Units are flattened into one units × annotators matrix (NaN = missing or skipped), which is
    what the pairwise correlations and Krippendorff's α take."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.units = self.make_units()
        self.matrix = np.array([[self.pick(self.ctx.value(i, n), key) for n in ctx.names] for i, key in self.units],
                               dtype=float).reshape(len(self.units), len(ctx.names))
        self.pool_matrix = self.matrix[:, [ctx.names.index(n) for n in ctx.pool]]
        position = {item: idx for idx, item in enumerate(ctx.items)}
        self.unit_item = np.array([position[i] for i, _ in self.units], dtype=np.int64)
        # units are made item by item, so each item's units are one contiguous slice
        self.bounds = np.searchsorted(self.unit_item, np.arange(len(ctx.items) + 1))

    @abstractmethod
    def make_units(self) -> list[tuple[Item, Any]]: ...

    def pick(self, value: Any, key: Any) -> float:
        """The number for one unit out of an answer, NaN when missing or skipped."""
        if value is None:
            return math.nan
        raw = value if key is None else value.get(key)
        return math.nan if raw is None else float(raw)

    def gold_of(self, item: Item, key: Any) -> float:
        return self.pick(self.ctx.gold.get(item), key)

    def disagreement(self) -> Disagreement:
        """Per unit, the standard deviation of ratings and |mean − gold|, both divided by the scale
        width so kinds are comparable; averaged over an item's units."""
        width = (self.ctx.scale[1] - self.ctx.scale[0]) or 1.0
        rated = ~np.isnan(self.pool_matrix).all(axis=1)
        pm = self.pool_matrix[rated]
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)[rated]
        among = np.nanstd(pm, axis=1) / width
        off = np.abs(np.nanmean(pm, axis=1) - gold) / width
        return _per_item(self.ctx.items, self.unit_item[rated], among, off)


def _per_item(items: list[Item], unit_item: np.ndarray, among: np.ndarray, off: np.ndarray) -> Disagreement:
    """Average unit-level disagreement per item; gold part NaN if no unit of the item has gold."""
    present = np.unique(unit_item)
    n = len(items)
    count = np.bincount(unit_item, minlength=n)[present]
    mean_among = np.bincount(unit_item, weights=among, minlength=n)[present] / count
    has = ~np.isnan(off)
    gold_count = np.bincount(unit_item[has], minlength=n)[present]
    gold_sum = np.bincount(unit_item[has], weights=off[has], minlength=n)[present]
    with_gold = np.divide(gold_sum, gold_count, out=np.full(len(present), np.nan), where=gold_count > 0)
    return Disagreement([items[i] for i in present], mean_among, with_gold)


class StsScorer(UnitScorer):
    """STS: mean rating per pair, then Spearman vs gold (HUME main), Fisher z CI with Var = 1/(n − 3)
    (HUME Table 8; Bonett–Wright or Fieller as a named option). Kendall's τ beside ρ and r."""

    main_metric = "spearman"
    ci_method = "fisher_z"
    agreement_metrics = ("spearman_mean", "pearson_mean", "kendall_mean", "krippendorff_alpha")
    flag_metrics = (("spearman_mean", "correlation"),)
    main_agreement = "spearman_mean"
    mteb_score_keys = {"spearman": "spearman", "pearson": "pearson"}
    judge_agreement = "interval"

    def make_units(self) -> list[tuple[Item, Any]]:
        return [(i, None) for i in self.ctx.items]

    def agreement(self) -> dict[str, Explained]:
        return _rating_agreement(self.pool_matrix)

    def _pairs(self, ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gold = np.array([self.gold_of(i, None) for i in self.ctx.items], dtype=float)
        keep = ~np.isnan(ratings) & ~np.isnan(gold)
        return ratings[keep], gold[keep]

    def annotator_scores(self, name: str) -> Scores:
        x, y = self._pairs(self.matrix[:, self.ctx.names.index(name)])
        return _correlations(x, y)

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        x, y = self._pairs(_nanmean_rows(self.pool_matrix))
        rho, reason = m.spearman.explain(x, y)
        ci = m.fisher_z_interval.explain(rho, x.size, variance=self.ctx.spearman_variance)
        extra = {"combination": "mean rating per pair, then Spearman against gold", "n": int(x.size), "n_unit": "pairs"}
        return Human(rho, ci, _correlations(x, y), int(x.size), reason=reason, extra=extra)

    def ci_name(self) -> str:
        return "fisher_z" if self.ctx.spearman_variance == "fisher" else f"fisher_z_{self.ctx.spearman_variance}"


class LikertScorer(UnitScorer):
    """Likert: mean per item and axis; Pearson per axis vs gold (and SAGE's 0.5·(r+1)).

    Agreement keys are flat, one per axis: `krippendorff_alpha_<axis>` (ordinal, value domain =
    the scale's integer steps). The main score `pearson_mean` is the mean of the axes' r; its CI
    is a Fisher z interval around the axes' mean z with one axis's variance 1/(n−3): exact for a
    single axis, conservative for several (it assumes fully dependent axes).
    """

    main_metric = "pearson_mean"
    ci_method = "fisher_z"
    agreement_metrics = ()
    main_agreement = "krippendorff_alpha_{axis}"
    mteb_score_keys = None  # MTEB has no likert task: the per-axis report names are kept
    judge_agreement = "ordinal"

    def make_units(self) -> list[tuple[Item, Any]]:
        return [(i, axis) for i in self.ctx.items for axis in self.ctx.axes]

    def agreement_names(self) -> tuple[str, ...]:
        return tuple(f"{metric}_{axis}" for axis in self.ctx.axes for metric in LIKERT_AGREEMENT)

    def flags(self) -> tuple[tuple[str, m.Family], ...]:
        return tuple((f"krippendorff_alpha_{axis}", "chance") for axis in self.ctx.axes)

    def _axis(self, matrix: np.ndarray, axis: str) -> np.ndarray:
        return matrix[[j for j, (_, a) in enumerate(self.units) if a == axis]]

    def agreement(self) -> dict[str, Explained]:
        low, high = self.ctx.scale
        observed = self.pool_matrix[~np.isnan(self.pool_matrix)]
        domain = np.union1d(np.arange(math.ceil(low), math.floor(high) + 1), observed)
        result = {}
        for a in self.ctx.axes:
            ratings = self._axis(self.pool_matrix, a)
            result[f"krippendorff_alpha_{a}"] = m.krippendorff_alpha.explain(ratings, "ordinal", domain)
            result |= {f"{name}_{a}": value for name, value in _rating_agreement(ratings).items()
                       if name != "krippendorff_alpha"}
        return result

    def _scores(self, ratings: np.ndarray) -> tuple[Scores, list[int]]:
        scores: Scores = {}
        sizes = []
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        for axis in self.ctx.axes:
            x, y = self._axis(ratings[:, None], axis)[:, 0], self._axis(gold[:, None], axis)[:, 0]
            keep = ~np.isnan(x) & ~np.isnan(y)
            scores |= {f"{name}_{axis}": value for name, value in _correlations(x[keep], y[keep]).items()}
            scores[f"sage_{axis}"] = m.sage_score(scores[f"pearson_{axis}"])
            sizes.append(int(keep.sum()))
        scores["pearson_mean"] = _mean([scores[f"pearson_{a}"] for a in self.ctx.axes])
        scores["sage_mean"] = m.sage_score(scores["pearson_mean"])
        return scores, sizes

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])[0]

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        scores, sizes = self._scores(_nanmean_rows(self.pool_matrix))
        rs = np.array([r for a in self.ctx.axes if (r := scores[f"pearson_{a}"]) is not None])
        centre = float(np.tanh(np.arctanh(np.clip(rs, -1 + 1e-15, 1 - 1e-15)).mean())) if rs.size else None
        ci = m.fisher_z_interval.explain(centre, min(sizes, default=0))
        extra = {"combination": "mean rating per item and axis, then Pearson r against gold per axis, averaged "
                                "over the axes", "n": min(sizes, default=0), "n_unit": "items"}
        return Human(scores["pearson_mean"], ci, scores, min(sizes, default=0), extra=extra)


# ---------------------------------------------------------------- query-based kinds


class QueryScorer(UnitScorer):
    """reranking and graded_relevance: one unit per (query, candidate) of the gold dict."""

    def make_units(self) -> list[tuple[Item, Any]]:
        units = []
        for item in self.ctx.items:
            keys = self.candidates(item)
            units.extend((item, key) for key in keys)
        return units

    def candidates(self, item: Item) -> list[Hashable]:
        """Gold's candidates in gold order; without gold, every candidate any annotator judged."""
        if self.ctx.has_gold(item):
            return list(self.ctx.gold[item])
        seen = {k for n in self.ctx.names if (v := self.ctx.value(item, n)) for k in v}
        return sorted(seen, key=str)

    def queries(self, column: np.ndarray) -> dict[Item, tuple[list[float], list[float]]]:
        """(gold, scores) per query with gold and a rating; unrated candidates rank last."""
        out = {}
        floor = self.ctx.scale[0] - 1.0
        for idx, item in enumerate(self.ctx.items):
            rows = np.arange(self.bounds[idx], self.bounds[idx + 1])
            if not self.ctx.has_gold(item) or rows.size == 0 or np.isnan(column[rows]).all():
                continue
            gold = [self.gold_of(item, self.units[r][1]) for r in rows]
            out[item] = ([0.0 if math.isnan(g) else g for g in gold], np.nan_to_num(column[rows], nan=floor).tolist())
        return out

    def no_relevant(self) -> list[Item]:
        """Queries whose gold has no relevant candidate: scored 0 and averaged in, as pytrec_eval and MTEB
        count them (measures/ranking.py), and counted in the human block (`n_queries_without_relevant`)."""
        gold = self.ctx.gold
        return [i for i in self.ctx.items if self.ctx.has_gold(i) and not any(v and v > 0 for v in gold[i].values())]


class RerankingScorer(QueryScorer):
    """Binary relevance per candidate; per-annotator MAP (sklearn AP of the 0/1 judgments), MRR@k,
    nDCG@k; the human score is the mean over annotators with the annotator range as CI (HUME)."""

    main_metric = "map"
    ci_method = "annotator_range"
    agreement_metrics = ("spearman_mean", "kendall_mean", "cohen_kappa_mean", "fleiss_kappa", "percent_agreement")
    flag_metrics = (("spearman_mean", "correlation"),)
    main_agreement = "spearman_mean"
    mteb_score_keys = {"map": "map", "mrr_at_10": "mrr@10", "ndcg_at_10": "ndcg@10"}
    judge_agreement = "nominal"

    def pick(self, value: Any, key: Any) -> float:
        """A candidate the annotator left unmarked counts as "not relevant"."""
        return math.nan if value is None else float(value.get(key) or 0)

    def agreement(self) -> dict[str, Explained]:
        """Spearman and Kendall per query over annotator pairs, averaged over queries (HUME's scoring
        script); κ and % agreement over all candidate judgments."""
        codes = np.where(np.isnan(self.pool_matrix), -1, self.pool_matrix).astype(np.int64)
        table = m.count_table(codes, 2)
        kappa, self.pairs = pairwise_kappa.summary(codes, self.ctx.pool, self.ctx.kappa_min_shared, "judgments")
        fleiss, reason = m.fleiss_kappa.explain(table)
        percent, percent_reason = m.percent_agreement.explain(table)
        return {"spearman_mean": self._per_query(m.spearman_rho),
                "kendall_mean": self._per_query(m.kendall_tau),
                "cohen_kappa_mean": kappa,
                "fleiss_kappa": (fleiss, reason if fleiss is None else fleiss_note(table, "judgments")),
                "percent_agreement": (percent, percent_reason or pairable_note(table, "judgments"))}

    def _per_query(self, fn: Callable[[np.ndarray, np.ndarray], float]) -> Explained:
        value, used, left_out = m.grouped_correlation(self.pool_matrix, self.bounds, fn)
        self.counts = {"n_queries": used, "n_queries_left_out": left_out}
        reason = "undefined: constant judgments on every query" if value is None else None
        return value, reason or f"mean over {used} queries; {left_out} left out (constant judgments)"

    def agreement_counts(self) -> dict[str, int]:
        return getattr(self, "counts", {})

    def annotator_scores(self, name: str) -> Scores:
        queries = list(self.queries(self.matrix[:, self.ctx.names.index(name)]).values())
        k = self.ctx.k
        return {"map": m.mean_over_queries(m.average_precision, queries)[0],
                f"mrr_at_{k}": m.mean_over_queries(m.reciprocal_rank, queries, k=k)[0],
                f"ndcg_at_{k}": m.mean_over_queries(m.ndcg_at_k, queries, k=k)[0]}

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        k = self.ctx.k
        scored = [self.queries(self.matrix[:, self.ctx.names.index(n)]) for n, s in per_annotator.items()
                  if s["map"] is not None]
        n = len(set().union(*scored)) if scored else 0
        human = _mean_of_annotators(per_annotator, "map", ("map", f"mrr_at_{k}", f"ndcg_at_{k}"), n, "queries", n)
        human.extra["n_queries_without_relevant"] = len(set().union(*scored) & set(self.no_relevant())) if scored else 0
        return human

    def disagreement(self) -> Disagreement:
        """Per candidate 1 − majority share; with gold: share of judgments ≠ gold; per-query mean."""
        rated = ~np.isnan(self.pool_matrix).all(axis=1)
        pm = self.pool_matrix[rated]
        yes, n = np.nansum(pm, axis=1), (~np.isnan(pm)).sum(axis=1)
        among = 1.0 - np.maximum(yes, n - yes) / n
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)[rated]
        off = np.where(gold > 0, n - yes, yes) / n
        return _per_item(self.ctx.items, self.unit_item[rated], among, np.where(np.isnan(gold), np.nan, off))


class GradedRelevanceScorer(QueryScorer):
    """Graded scores per document: mean score per document, rank, nDCG@k (main) with trec_eval's
    gains (the grade itself, what MTEB computes through pytrec_eval; 2^rel − 1 as a labelled option)
    and Recall@k at a threshold; Spearman, Pearson and Kendall of all ratings against the gold grades;
    CI by a seeded bootstrap over queries."""

    main_metric = "ndcg_at_k"
    ci_method = "bootstrap_bca"
    agreement_metrics = ("spearman_mean", "pearson_mean", "kendall_mean", "krippendorff_alpha")
    flag_metrics = (("spearman_mean", "correlation"),)
    main_agreement = "spearman_mean"
    mteb_score_keys = {"ndcg_at_10": "ndcg_at_10", "recall_at_10": "recall_at_10"}
    judge_agreement = "interval"

    def agreement(self) -> dict[str, Explained]:
        return _rating_agreement(self.pool_matrix)

    def _per_query(self, column: np.ndarray) -> dict[Item, tuple[float | None, float | None]]:
        """(nDCG@k, Recall@k) per query with gold, for one column of scores."""
        k, threshold = self.ctx.k, self.ctx.threshold
        return {item: (m.ndcg_at_k(g, s, k=k, gains=self.ctx.gains), m.recall_at_k(g, s, k=k, threshold=threshold))
                for item, (g, s) in self.queries(column).items()}

    def _scores(self, column: np.ndarray) -> Scores:
        per_query = self._per_query(column).values()
        k = self.ctx.k
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        keep = ~np.isnan(column) & ~np.isnan(gold)
        return {f"ndcg_at_{k}": _mean([n for n, _ in per_query]), f"recall_at_{k}": _mean([r for _, r in per_query]),
                **_correlations(column[keep], gold[keep])}

    def main(self) -> str:
        return f"ndcg_at_{self.ctx.k}"

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        column = _nanmean_rows(self.pool_matrix)
        ndcg = [n for n, _ in self._per_query(column).values() if n is not None]
        scores = self._scores(column)
        extra = {"combination": "mean score per document, then rank", "ndcg_gains": GAIN_LABELS[self.ctx.gains],
                 "n": len(ndcg), "n_unit": "queries",
                 "n_queries_without_relevant": len(set(self._per_query(column)) & set(self.no_relevant()))}
        return Human(scores[self.main()], m.bootstrap_interval.explain(ndcg), scores, len(ndcg), extra=extra)

    def disagreement(self) -> Disagreement:
        """Among annotators: rating spread over the scale (as for STS). With gold: 1 − nDCG@k of
        the mean ranking, because gold grades need not share the annotators' scale."""
        spread = super().disagreement()
        ndcg = {item: n for item, (n, _) in self._per_query(_nanmean_rows(self.pool_matrix)).items()}
        with_gold = [math.nan if ndcg.get(i) is None else 1.0 - ndcg[i] for i in spread.items]
        return Disagreement(spread.items, spread.among, np.array(with_gold, dtype=float))


LIKERT_AGREEMENT = ("krippendorff_alpha", "spearman_mean", "pearson_mean", "kendall_mean")
GAIN_LABELS = {"linear": "linear: gain = grade (trec_eval ndcg_cut, as MTEB via pytrec_eval)",
               "exponential": "exponential: gain = 2^grade - 1 (option, not MTEB's)"}


def _rating_agreement(matrix: np.ndarray) -> dict[str, Explained]:
    """Mean pairwise Spearman, Pearson and Kendall, and interval Krippendorff's α, of a rating matrix."""
    return {"spearman_mean": m.spearman_mean.explain(matrix), "pearson_mean": m.pearson_mean.explain(matrix),
            "kendall_mean": m.kendall_mean.explain(matrix),
            "krippendorff_alpha": m.krippendorff_alpha.explain(matrix, "interval")}


def _correlations(x: np.ndarray, y: np.ndarray) -> Scores:
    """Spearman, Pearson and Kendall of ratings against gold (None where undefined)."""
    return {"spearman": m.spearman(x, y), "pearson": m.pearson(x, y), "kendall": m.kendall(x, y)}


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    """Row means ignoring NaN; all-NaN rows stay NaN without a RuntimeWarning."""
    counts = (~np.isnan(matrix)).sum(axis=1)
    sums = np.nansum(matrix, axis=1)
    return np.divide(sums, counts, out=np.full(len(matrix), np.nan), where=counts > 0)
