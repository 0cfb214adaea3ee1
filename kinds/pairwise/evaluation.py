"""How models are run and scored on pairwise items: which text is closer to the context, accuracy; the
humans' majority; McNemar's exact test of who is right."""
from __future__ import annotations

from typing import Any

from kinds.evaluation import (
    Evaluated,
    Items,
    LabelEvaluation,
    ModelAccess,
)
from measures import model_scoring


class PairwiseEvaluation(LabelEvaluation):
    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [payload["context"], payload["a"], payload["b"]]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        contexts = [p["context"] for _, p in items]
        sim_a = model.similarity(contexts, [p["a"] for _, p in items])
        sim_b = model.similarity(contexts, [p["b"] for _, p in items])
        return model_scoring.pairwise(sim_a, sim_b, [truth[i] for i, _ in items])

    def protocol_note(self, gold: dict[str, Any], protocol: str) -> str:
        return "SAGE's protocol (MTEB has no such task)"
