"""How models are run and scored on classification items: logistic regression on the embeddings, as MTEB
(or the pooled protocol), accuracy; the humans' majority label; McNemar's exact test of who is right."""
from __future__ import annotations

from typing import Any

from kinds.evaluation import (
    Evaluated,
    Items,
    LabelEvaluation,
    ModelAccess,
)
from measures import model_scoring


class ClassificationEvaluation(LabelEvaluation):
    protocols = model_scoring.CLASSIFICATION_PROTOCOLS
    encoder_only = "a classifier needs vectors"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return [payload["text"]]

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        vectors = model.embed([p["text"] for _, p in items])
        return model_scoring.classification(vectors, [truth[i] for i, _ in items], protocol=protocol)

    def protocol_note(self, gold: dict[str, Any], protocol: str) -> str:
        """The folds, seed, undersampling and averaging of the cross-validation."""
        if "cv_folds" not in gold:
            return super().protocol_note(gold, protocol)
        folds = f"{gold['cv_folds']}-fold cross-validation, seed {gold['seed']}"
        if protocol == "pooled":
            return f"pooled (not MTEB's): {folds}, whole training folds, pooled out-of-fold predictions"
        return f"MTEB's protocol: {folds}, {gold['samples_per_label']} training items per label, mean of the folds"

    def too_few_items(self, truth: list[Any]) -> str | None:
        return model_scoring.thin_labels(truth)
