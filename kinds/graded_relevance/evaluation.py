"""How models are run and scored on graded-relevance items: the query against each document, nDCG@10 as
MTEB; the humans' mean grade per document; a paired permutation test of nDCG@10 over queries."""
from __future__ import annotations

from typing import Any

from sklearn import metrics as skm

from kinds.evaluation import (
    Evaluated,
    Items,
    ModelAccess,
    ModelEvaluation,
    mean_by_key,
    query_paired_test,
    query_similarities,
)
from measures import model_scoring


class GradedRelevanceEvaluation(ModelEvaluation):
    main_metric = "ndcg_at_10"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [payload["query"], *(d["text"] for d in payload["documents"])]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        sims = query_similarities(model, items, "documents")
        return model_scoring.graded_relevance(
            [(ids, s, [truth[i].get(d, 0) for d in ids]) for (i, _), (ids, s) in zip(items, sims, strict=True)])

    def consensus(self, answers: list[Any]) -> Any:
        return mean_by_key(answers)

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        return query_paired_test(ids, payloads, gold, humans, model, "documents",
                                 lambda truth, scores: skm.ndcg_score([truth], [scores], k=10))
