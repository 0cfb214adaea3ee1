"""The human score of the reranking kind (HUME protocol; kinds/rating_scorers.py has what the
query kinds share)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from kinds.charts import wilson_of_score
from kinds.rating_scorers import (
    QueryScorer,
    per_item_disagreement,
)
from kinds.scorers import (
    Disagreement,
    Explained,
    Human,
    Scores,
    fleiss_note,
    mean_of_annotators,
    pairable_note,
)
from measures import annotator_models, pairwise_kappa
from measures import metrics as m


class RerankingScorer(QueryScorer):
    """Binary relevance per candidate; per-annotator MAP (sklearn AP of the 0/1 judgments), MRR@k,
    nDCG@k; the human score is the mean over annotators with the annotator range as CI (HUME)."""

    main_metric = "map"
    ci_method = "annotator_range"
    agreement_metrics = ("spearman_mean", "kendall_mean", "cohen_kappa_mean", "fleiss_kappa", "percent_agreement",
                         "gwet_ac1")
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
                "percent_agreement": (percent, percent_reason or pairable_note(table, "judgments")),
                "gwet_ac1": self.gwet_entry("gwet_ac1", table)}

    def model_triples(self) -> list[annotator_models.Triple]:
        """One unit per (query, candidate): the 0/1 judgments the scorer reads (unmarked = not relevant)."""
        candidates: dict[Any, list[Any]] = {}
        for item, key in self.units:
            candidates.setdefault(item, []).append(key)
        return annotator_models.triples_of_candidates(self.ctx.answers, self.ctx.pool, candidates)

    def model_gold(self) -> dict[Any, Any]:
        return {(item, key): (1 if gold > 0 else 0) for item, key in self.units
                if (gold := self.gold_of(item, key)) is not None and not math.isnan(gold)}

    def _per_query(self, fn: Callable[[np.ndarray, np.ndarray], float]) -> Explained:
        value, used, left_out = m.grouped_correlation(self.pool_matrix, self.bounds, fn)
        self.counts = {"n_queries": used, "n_queries_left_out": left_out}
        reason = "undefined: constant judgments on every query" if value is None else None
        return value, reason or f"mean over {used} queries; {left_out} left out (constant judgments)"

    def agreement_counts(self) -> dict[str, int]:
        return getattr(self, "counts", {})

    def annotator_scores(self, name: str) -> Scores:
        return self._column_scores(self.matrix[:, self.ctx.names.index(name)])

    def _column_scores(self, column: np.ndarray) -> Scores:
        queries = list(self.queries(column).values())
        k = self.ctx.k
        return {"map": m.mean_over_queries(m.average_precision, queries)[0],
                f"mrr_at_{k}": m.mean_over_queries(m.reciprocal_rank, queries, k=k)[0],
                f"ndcg_at_{k}": m.mean_over_queries(m.ndcg_at_k, queries, k=k)[0]}

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        if self.ctx.aggregation != "majority":
            return self._modelled_human()
        k = self.ctx.k
        scored = [self.queries(self.matrix[:, self.ctx.names.index(n)]) for n, s in per_annotator.items()
                  if s["map"] is not None]
        n = len(set().union(*scored)) if scored else 0
        human = mean_of_annotators(per_annotator, "map", ("map", f"mrr_at_{k}", f"ndcg_at_{k}"), n, "queries", n)
        human.extra["n_queries_without_relevant"] = len(set().union(*scored) & set(self.no_relevant())) if scored else 0
        return human

    def _modelled_human(self) -> Human:
        """The human as aggregated by an annotator model: its consensus relevance per (query, candidate) is one
        set of judgments, scored like an annotator's (MAP, MRR@k, nDCG@k); CI Wilson with N = queries, as for a
        single annotator (HUME Table 8), since a consensus has no annotator range."""
        method = self.ctx.aggregation
        consensus = annotator_models.fit(method, self.model_triples()).consensus
        column = np.array([consensus.get(unit, math.nan) for unit in self.units], dtype=float)
        scores = self._column_scores(column)
        n = len(self.queries(column))
        extra = {"combination": f"{method} consensus per candidate ({annotator_models.CROWD_KIT}), scored as one "
                                "annotator's judgments", "aggregation": method, "n": n, "n_unit": "queries",
                 "n_queries_without_relevant": len(set(self.queries(column)) & set(self.no_relevant()))}
        main = scores["map"]
        ci = m.wilson_interval.explain(main * n, n) if main is not None else (None, "undefined: no scored queries")
        return Human(main, ci, scores, n, extra=extra, ci_method="wilson (consensus, N = queries)")

    def disagreement(self) -> Disagreement:
        """Per candidate 1 − majority share; with gold: share of judgments ≠ gold; per-query mean."""
        rated = ~np.isnan(self.pool_matrix).all(axis=1)
        pm = self.pool_matrix[rated]
        yes, n = np.nansum(pm, axis=1), (~np.isnan(pm)).sum(axis=1)
        among = 1.0 - np.maximum(yes, n - yes) / n
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)[rated]
        off = np.where(gold > 0, n - yes, yes) / n
        off_gold = np.where(np.isnan(gold), np.nan, off)
        return per_item_disagreement(self.ctx.items, self.unit_item[rated], among, off_gold)

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        column = self.ctx.names.index(name)
        n = len(self.queries(self.matrix[:, column]))
        return wilson_of_score(score, n), "wilson (N = queries)", n

    def charts(self) -> dict[str, Any]:
        """Reranking: every human judgment (relevant or not) against gold relevance, and each annotator's share
        of "relevant" judgments."""
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        pool = self.pool_matrix
        matrix = np.zeros(4, dtype=np.int64)
        for column in pool.T:
            keep = ~np.isnan(column) & ~np.isnan(gold)
            matrix += np.bincount(2 * (gold[keep] > 0) + (column[keep] > 0), minlength=4)
        matrix = matrix.reshape(2, 2)
        rows = []
        for name, column in zip(self.ctx.names, self.matrix.T, strict=True):
            given = column[~np.isnan(column)] > 0
            rows.append({"name": name, "counts": [int((~given).sum()), int(given.sum())]})
        known = gold[~np.isnan(gold)] > 0
        rows.append({"name": "gold", "counts": [int((~known).sum()), int(known.sum())]})
        labels = ["not relevant", "relevant"]
        return {"confusion": {"labels": labels, "matrix": matrix.tolist(), "rows": "gold",
                              "columns": "human judgments (all annotators)"},
                "distribution": {"labels": labels, "rows": rows}}

    @classmethod
    def mteb_agreement(cls, doc: dict[str, Any], counts: dict[str, Any], headline: dict[str, Any]) -> dict[str, Any]:
        """As the baseline's reranking block: the mean correlations and binary κ over queries, no headline."""
        agreement = doc["agreement"]
        return {**counts, "mean_spearman": agreement.get("spearman_mean"),
                "mean_kendall_tau": agreement.get("kendall_mean"),
                "mean_binary_kappa": agreement.get("cohen_kappa_mean"),
                "n_comparisons": (doc.get("agreement_counts") or {}).get("n_queries")}
