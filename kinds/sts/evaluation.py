"""How models are run and scored on STS items: cosine similarity of the two sentences against the score
(MTEB's STS evaluator), the humans' mean rating, and a paired bootstrap of Spearman's ρ."""
from __future__ import annotations

from typing import Any

import numpy as np

from kinds.evaluation import (
    Evaluated,
    Items,
    ModelAccess,
    ModelEvaluation,
)
from measures import model_scoring, significance


class StsEvaluation(ModelEvaluation):
    main_metric = "cosine_spearman"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [payload["sentence1"], payload["sentence2"]]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        sims = model.similarity([p["sentence1"] for _, p in items], [p["sentence2"] for _, p in items])
        return model_scoring.sts(sims, [float(truth[i]) for i, _ in items])

    def consensus(self, answers: list[Any]) -> Any:
        return float(np.mean([float(a) for a in answers]))

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        return significance.paired_bootstrap_spearman([gold[i] for i in ids], [humans[i] for i in ids],
                                                      [model[i] for i in ids])

    def too_few_items(self, truth: list[Any]) -> str | None:
        return model_scoring.thin_correlation(truth)
