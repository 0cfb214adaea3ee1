"""The human score of the STS kind (HUME protocol; kinds/rating_scorers.py has what the kinds with
one number per unit share)."""
from __future__ import annotations

from typing import Any

import numpy as np

from kinds.rating_scorers import (
    GWET_AC2,
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
)
from measures import metrics as m


class StsScorer(UnitScorer):
    """STS: mean rating per pair, then Spearman vs gold (HUME main), Fisher z CI with Var = 1/(n − 3)
    (HUME Table 8; Bonett–Wright or Fieller as a named option). Kendall's τ beside ρ and r."""

    main_metric = "spearman"
    ci_method = "fisher_z"
    agreement_metrics = ("spearman_mean", "pearson_mean", "kendall_mean", "krippendorff_alpha", *GWET_AC2)
    flag_metrics = (("spearman_mean", "correlation"),)
    main_agreement = "spearman_mean"
    mteb_score_keys = {"spearman": "spearman", "pearson": "pearson"}
    judge_agreement = "interval"

    def make_units(self) -> list[tuple[Item, Any]]:
        return [(i, None) for i in self.ctx.items]

    def agreement(self) -> dict[str, Explained]:
        return rating_agreement(self.pool_matrix) | self.gwet_ac2(self.pool_matrix)

    def _pairs(self, ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gold = np.array([self.gold_of(i, None) for i in self.ctx.items], dtype=float)
        keep = ~np.isnan(ratings) & ~np.isnan(gold)
        return ratings[keep], gold[keep]

    def annotator_scores(self, name: str) -> Scores:
        x, y = self._pairs(self.matrix[:, self.ctx.names.index(name)])
        return gold_correlations(x, y)

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        x, y = self._pairs(nanmean_rows(self.pool_matrix))
        rho, reason = m.spearman.explain(x, y)
        ci = m.fisher_z_interval.explain(rho, x.size, variance=self.ctx.spearman_variance)
        extra = {"combination": "mean rating per pair, then Spearman against gold", "n": int(x.size), "n_unit": "pairs"}
        return Human(rho, ci, gold_correlations(x, y), int(x.size), reason=reason, extra=extra)

    def ci_name(self) -> str:
        return "fisher_z" if self.ctx.spearman_variance == "fisher" else f"fisher_z_{self.ctx.spearman_variance}"

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        column = self.ctx.names.index(name)
        x, _ = self._pairs(self.matrix[:, column])
        return m.fisher_z_interval.explain(score, x.size, variance=self.ctx.spearman_variance), "fisher_z", x.size

    def charts(self) -> dict[str, Any]:
        return self.scatters()
