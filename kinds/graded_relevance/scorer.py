"""The human score of the graded relevance kind (kinds/rating_scorers.py has what the query kinds
share)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from kinds.rating_scorers import (
    GAIN_LABELS,
    GWET_AC2,
    QueryScorer,
    gold_correlations,
    nanmean_rows,
    rating_agreement,
)
from kinds.scorers import (
    Disagreement,
    Explained,
    Human,
    Item,
    Scores,
    mean_or_none,
)
from measures import metrics as m


class GradedRelevanceScorer(QueryScorer):
    """Graded scores per document: mean score per document, rank, nDCG@k (main) with trec_eval's
    gains (the grade itself, what MTEB computes through pytrec_eval; 2^rel − 1 as a labelled option)
    and Recall@k at a threshold; Spearman, Pearson and Kendall of all ratings against the gold grades;
    CI by a seeded bootstrap over queries."""

    main_metric = "ndcg_at_k"
    ci_method = "bootstrap_bca"
    agreement_metrics = ("spearman_mean", "pearson_mean", "kendall_mean", "krippendorff_alpha", *GWET_AC2)
    flag_metrics = (("spearman_mean", "correlation"),)
    main_agreement = "spearman_mean"
    mteb_score_keys = {"ndcg_at_10": "ndcg_at_10", "recall_at_10": "recall_at_10"}
    judge_agreement = "interval"

    def agreement(self) -> dict[str, Explained]:
        return rating_agreement(self.pool_matrix) | self.gwet_ac2(self.pool_matrix)

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
        return {f"ndcg_at_{k}": mean_or_none([n for n, _ in per_query]),
                f"recall_at_{k}": mean_or_none([r for _, r in per_query]),
                **gold_correlations(column[keep], gold[keep])}

    def main(self) -> str:
        return f"ndcg_at_{self.ctx.k}"

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        column = nanmean_rows(self.pool_matrix)
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
        ndcg = {item: n for item, (n, _) in self._per_query(nanmean_rows(self.pool_matrix)).items()}
        with_gold = [math.nan if ndcg.get(i) is None else 1.0 - ndcg[i] for i in spread.items]
        return Disagreement(spread.items, spread.among, np.array(with_gold, dtype=float))

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        column = self.ctx.names.index(name)
        ndcg = [v for v, _ in self._per_query(self.matrix[:, column]).values() if v is not None]
        return m.bootstrap_interval.explain(ndcg), "bootstrap_bca", len(ndcg)

    def charts(self) -> dict[str, Any]:
        return self.scatters()
