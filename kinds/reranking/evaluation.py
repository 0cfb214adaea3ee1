"""How models are run and scored on reranking items: the query (with its instruction) against each candidate,
MAP as MTEB; the humans' majority per candidate; a paired permutation test of average precision over queries."""
from __future__ import annotations

from typing import Any

from sklearn import metrics as skm

from kinds.evaluation import (
    Evaluated,
    Items,
    ModelAccess,
    ModelEvaluation,
    mean_by_key,
    query_of,
    query_paired_test,
    query_similarities,
)
from measures import model_scoring


class RerankingEvaluation(ModelEvaluation):
    main_metric = "map_at_1000"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [query_of(payload), *(c["text"] for c in payload["candidates"])]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        sims = query_similarities(model, items, "candidates")
        return model_scoring.reranking(
            [(ids, s, [truth[i].get(c, 0) for c in ids]) for (i, _), (ids, s) in zip(items, sims, strict=True)])

    def consensus(self, answers: list[Any]) -> Any:
        return {k: int(v >= 0.5) for k, v in mean_by_key(answers).items()}  # majority, a tie counts relevant

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        return query_paired_test(ids, payloads, gold, humans, model, "candidates",
                                 lambda truth, scores: skm.average_precision_score(truth > 0, scores))
