"""The human score of the Likert kind (kinds/rating_scorers.py has what the kinds with one number
per unit share)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from kinds.rating_scorers import (
    LIKERT_AGREEMENT,
    UnitScorer,
    gold_correlations,
    nanmean_rows,
    rating_agreement,
)
from kinds.scorers import (
    Explained,
    Human,
    Item,
    Scores,
    mean_or_none,
)
from measures import metrics as m


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
            result |= {f"{name}_{a}": value for name, value in rating_agreement(ratings).items()
                       if name != "krippendorff_alpha"}
            result |= self.gwet_ac2(ratings, f"_{a}")
        return result

    def _scores(self, ratings: np.ndarray) -> tuple[Scores, list[int]]:
        scores: Scores = {}
        sizes = []
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        for axis in self.ctx.axes:
            x, y = self._axis(ratings[:, None], axis)[:, 0], self._axis(gold[:, None], axis)[:, 0]
            keep = ~np.isnan(x) & ~np.isnan(y)
            scores |= {f"{name}_{axis}": value for name, value in gold_correlations(x[keep], y[keep]).items()}
            scores[f"sage_{axis}"] = m.sage_score(scores[f"pearson_{axis}"])
            sizes.append(int(keep.sum()))
        scores["pearson_mean"] = mean_or_none([scores[f"pearson_{a}"] for a in self.ctx.axes])
        scores["sage_mean"] = m.sage_score(scores["pearson_mean"])
        return scores, sizes

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])[0]

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        scores, sizes = self._scores(nanmean_rows(self.pool_matrix))
        rs = np.array([r for a in self.ctx.axes if (r := scores[f"pearson_{a}"]) is not None])
        centre = float(np.tanh(np.arctanh(np.clip(rs, -1 + 1e-15, 1 - 1e-15)).mean())) if rs.size else None
        ci = m.fisher_z_interval.explain(centre, min(sizes, default=0))
        extra = {"combination": "mean rating per item and axis, then Pearson r against gold per axis, averaged "
                                "over the axes", "n": min(sizes, default=0), "n_unit": "items"}
        return Human(scores["pearson_mean"], ci, scores, min(sizes, default=0), extra=extra)

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        column = self.ctx.names.index(name)
        n = min(self._scores(self.matrix[:, column])[1], default=0)
        return m.fisher_z_interval.explain(score, n), "fisher_z", n

    def charts(self) -> dict[str, Any]:
        return self.scatters()
