"""What the scorers of the kinds whose answer holds one number per unit share (STS, Likert, reranking and
graded relevance, each in kinds/<name>/scorer.py): one units × annotators matrix (`UnitScorer`) and the
query kinds' base (`QueryScorer`). The base class and the shapes every kind shares are in kinds/scorers.py.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Hashable
from typing import Any

import numpy as np

from kinds.charts import sample_indices
from kinds.scorers import (
    Context,
    Disagreement,
    Explained,
    Item,
    KindScorer,
    Scores,
)
from measures import gwet
from measures import metrics as m

GWET_WEIGHTINGS: tuple[gwet.Weighting, ...] = ("ordinal", "linear", "quadratic")
GWET_AC2 = tuple(f"gwet_ac2_{weighting}" for weighting in GWET_WEIGHTINGS)
GWET_MAX_CATEGORIES = 101  # a 0–100 scale in steps of 1; finer sliders get "n/a" for AC2

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

    def gwet_ac2(self, ratings: np.ndarray, suffix: str = "") -> dict[str, Explained]:
        """Gwet's AC2 of a rating matrix with ordinal, linear and quadratic weights (measures/gwet.py).

        The categories are the scale's integer points and every value given (irrCAC advises the complete
        list: unused categories count in chance agreement); more than GWET_MAX_CATEGORIES distinct values
        (a fine slider) are answered "n/a" rather than a table with a column per value."""
        names = [f"gwet_ac2_{weighting}{suffix}" for weighting in GWET_WEIGHTINGS]
        low, high = self.ctx.scale
        given = ratings[~np.isnan(ratings)]
        values = np.union1d(np.arange(math.ceil(low), math.floor(high) + 1), given)
        if len(values) > GWET_MAX_CATEGORIES:
            reason = f"n/a: {len(values)} distinct values (more than {GWET_MAX_CATEGORIES} categories)"
            return {name: (None, reason) for name in names}
        codes = np.where(np.isnan(ratings), -1, np.searchsorted(values, np.nan_to_num(ratings))).astype(np.int64)
        table = m.count_table(codes, len(values))
        return {name: self.gwet_entry(name, table, gwet.weights(values, weighting), weighting)
                for name, weighting in zip(names, GWET_WEIGHTINGS, strict=True)}

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
        return per_item_disagreement(self.ctx.items, self.unit_item[rated], among, off)

    def scatters(self) -> dict[str, Any]:
        """Each annotator's ratings against gold, and the two annotators who share the most units against
        each other (seeded samples of at most MAX_POINTS points)."""
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        names = self.ctx.names
        rated = ~np.isnan(self.matrix) & ~np.isnan(gold)[:, None]
        rows, columns = np.nonzero(rated.T)  # annotator by annotator, as the legend lists them
        keep = sample_indices(len(rows))
        points = np.column_stack([gold[columns[keep]], self.matrix[columns[keep], rows[keep]], rows[keep]])
        data: dict[str, Any] = {}
        if len(rows):  # no chart of nothing (every answer skipped)
            data["scatter_gold"] = {"names": names, "n_points": len(rows), "scale": list(self.ctx.scale),
                                    "points": [[g, r, int(i)] for g, r, i in points.tolist()]}
        pool = [names.index(n) for n in self.ctx.pool]
        best: tuple[int, int, int] | None = None
        for position, i in enumerate(pool):
            for j in pool[position + 1:]:
                shared = int((~np.isnan(self.matrix[:, i]) & ~np.isnan(self.matrix[:, j])).sum())
                if shared and (best is None or shared > best[0]):
                    best = (shared, i, j)
        if best:
            _, i, j = best
            both = np.flatnonzero(~np.isnan(self.matrix[:, i]) & ~np.isnan(self.matrix[:, j]))
            chosen = both[sample_indices(len(both))]
            pair = np.column_stack([self.matrix[chosen, i], self.matrix[chosen, j]])
            data["scatter_pair"] = {"a": names[i], "b": names[j], "n_points": len(both), "scale": list(self.ctx.scale),
                                    "points": pair.tolist()}
        return data


def per_item_disagreement(items: list[Item], unit_item: np.ndarray, among: np.ndarray, off: np.ndarray) -> Disagreement:
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


LIKERT_AGREEMENT = ("krippendorff_alpha", "spearman_mean", "pearson_mean", "kendall_mean", *GWET_AC2)
GAIN_LABELS = {"linear": "linear: gain = grade (trec_eval ndcg_cut, as MTEB via pytrec_eval)",
               "exponential": "exponential: gain = 2^grade - 1 (option, not MTEB's)"}


def rating_agreement(matrix: np.ndarray) -> dict[str, Explained]:
    """Mean pairwise Spearman, Pearson and Kendall, and interval Krippendorff's α, of a rating matrix."""
    return {"spearman_mean": m.spearman_mean.explain(matrix), "pearson_mean": m.pearson_mean.explain(matrix),
            "kendall_mean": m.kendall_mean.explain(matrix),
            "krippendorff_alpha": m.krippendorff_alpha.explain(matrix, "interval")}


def gold_correlations(x: np.ndarray, y: np.ndarray) -> Scores:
    """Spearman, Pearson and Kendall of ratings against gold (None where undefined)."""
    return {"spearman": m.spearman(x, y), "pearson": m.pearson(x, y), "kendall": m.kendall(x, y)}


def nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    """Row means ignoring NaN; all-NaN rows stay NaN without a RuntimeWarning."""
    counts = (~np.isnan(matrix)).sum(axis=1)
    sums = np.nansum(matrix, axis=1)
    return np.divide(sums, counts, out=np.full(len(matrix), np.nan), where=counts > 0)
