"""How models are run and scored on Likert items: similarity of the text to its context against each axis
(SAGE's 0.5·(r+1)); the humans' mean per axis; a paired bootstrap of the Likert score difference."""
from __future__ import annotations

from typing import Any

from kinds.evaluation import (
    Evaluated,
    Items,
    ModelAccess,
    ModelEvaluation,
    mean_by_key,
)
from measures import model_scoring, significance


class LikertEvaluation(ModelEvaluation):
    main_metric = "sage_mean"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [payload["context"], payload["text"]]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        sims = model.similarity([p["context"] for _, p in items], [p["text"] for _, p in items])
        axes = sorted({a for i, _ in items for a in truth[i]})
        return model_scoring.likert(sims, {a: [truth[i].get(a) for i, _ in items] for a in axes})

    def consensus(self, answers: list[Any]) -> Any:
        return mean_by_key(answers)

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        axes = sorted({a for i in ids for a in gold[i]})  # the items with every gold axis in gold and the humans' means
        ids = [i for i in ids if all(gold[i].get(a) is not None and humans[i].get(a) is not None for a in axes)]
        return significance.paired_bootstrap_likert({a: [gold[i][a] for i in ids] for a in axes},
                                                    {a: [humans[i][a] for i in ids] for a in axes},
                                                    [model[i] for i in ids])

    def protocol_note(self, gold: dict[str, Any], protocol: str) -> str:
        return "SAGE's protocol (MTEB has no such task)"

    def too_few_items(self, truth: list[Any]) -> str | None:
        return model_scoring.thin_correlation(truth)
