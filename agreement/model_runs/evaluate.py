"""A task's items, seen by a model: the kind's model evaluation (kinds/<name>/evaluation.py, looked up in the
registry) run with this app's model access (cached embeddings and similarities, similarity.py).

`evaluate(kind, model, items, truth)` takes items as (id, payload) and truth as {item id: value in the kind's
gold format} (clustering: a list of partitions), and returns (scores, predictions by item id). Items without
a truth value are left out of that score.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agreement.model_runs.embedding import cosine_pairs, embed, similarity, stacked, vectors_by_text
from kinds.evaluation import ModelEvaluation
from kinds.kind_registry import Parts
from measures.model_scoring import CannotScore

Items = Sequence[tuple[int, dict[str, Any]]]
EVALUATIONS: Parts[ModelEvaluation] = Parts("model_evaluation")  # {kind name: how models are scored on it}


class UnsupportedKind(ValueError):
    """This model cannot score this kind of task."""


class ModelAccess:
    """An EmbeddingModel as a kind's evaluation asks it (kinds/evaluation.py `ModelAccess`): through the cache.

    An encoder's vectors are kept by text for the access's life, so a run's two targets (gold, the humans'
    consensus) and a kind asking the same texts twice look each text up once."""

    def __init__(self, model: Any, known: dict[str, np.ndarray] | None = None) -> None:
        self.model = model
        self.is_encoder = model.is_encoder
        self.by_text = known if known is not None else {}  # {text: vector} this process holds already

    def similarity(self, a: list[str], b: list[str]) -> np.ndarray:
        if not self.is_encoder or len(a) != len(b):
            return similarity(self.model, a, b, known=self.by_text)
        self.fetch([*a, *b])
        return cosine_pairs(self.by_text, a, b)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return embed(self.model, [])
        self.fetch(texts)
        by_text = self.by_text
        return stacked([by_text[t] for t in texts])

    def fetch(self, texts: list[str]) -> None:
        """Bring the vectors of those texts the access does not hold yet (from the cache, else encoded)."""
        by_text = self.by_text
        missing = [t for t in dict.fromkeys(texts) if t not in by_text]
        if missing:
            by_text.update(vectors_by_text(self.model, missing))


def evaluation_of(kind: str) -> ModelEvaluation:
    try:
        return EVALUATIONS[kind]
    except KeyError:
        raise UnsupportedKind(f"task kind {kind!r} has no model scoring; supported: {', '.join(EVALUATIONS)}") from None


def item_texts(kind: str, payload: dict[str, Any]) -> list[str]:
    """Every text of one item a model reads (what a chunk embeds ahead of scoring)."""
    return evaluation_of(kind).item_texts(payload)


def check_protocol(kind: str, protocol: str) -> None:
    """Every kind follows MTEB; classification alone has another protocol ("pooled", model_scoring.classification)."""
    allowed = evaluation_of(kind).protocols
    if protocol not in allowed:
        raise UnsupportedKind(f"protocol {protocol!r} is not one of a {kind} task's: {', '.join(allowed)}")


def check_supported(kind: str, model: Any) -> None:
    reason = evaluation_of(kind).encoder_only
    if reason and not model.is_encoder:
        raise UnsupportedKind(f"{model.name} ({model.backend} {model.metric}) cannot score a {kind} task: "
                              f"{reason}, and a classical metric has none")


def evaluate(kind: str, model: Any, items: Items, truth: dict[int, Any], protocol: str = "mteb", *,
             known: dict[str, np.ndarray] | None = None, access: ModelAccess | None = None
             ) -> tuple[dict[str, Any], dict[int, Any]]:
    """protocol: "mteb" (every kind), or another the kind allows ("pooled": classification only); known: the
    vectors this process holds for the model already (similarity.embed's), read before the cache; access: one
    shared with another evaluation of the same model (a run's two targets), whose vectors it reuses."""
    check_supported(kind, model)
    check_protocol(kind, protocol)
    kept = [(i, p) for i, p in items if truth.get(i) is not None]
    if not kept:
        raise CannotScore("no item has a value to score against")
    evaluation, access = evaluation_of(kind), access or ModelAccess(model, known)
    scores, predictions = evaluation.evaluate(access, kept, truth, protocol)
    return ({"main_metric": evaluation.main_metric_for(access), **scores},
            {i: p for (i, _), p in zip(kept, predictions, strict=True)})


def consensus(kind: str, answers: list[Any]) -> Any:
    """The humans' answer to score a model against (None when nobody answered)."""
    return evaluation_of(kind).consensus(answers) if answers else None


def gold_truth(kind: str, gold: Any) -> Any:
    """Gold in the shape evaluate() wants (clustering: one reference partition)."""
    return None if gold is None else evaluation_of(kind).gold_truth(gold)


def too_few_items(kind: str, truth: list[Any]) -> str | None:
    """Why a score over these reference values is too thin to compare or rank (None: enough; the kind says)."""
    return evaluation_of(kind).too_few_items(truth)


def compare(kind: str, payloads: dict[int, dict[str, Any]], gold: dict[int, Any], humans: dict[int, Any],
            model: dict[int, Any]) -> dict[str, Any] | None:
    """The kind's paired test (measures/significance.py) on the items with gold, a human consensus and a model
    prediction. humans: the consensus per item (clustering: the list of annotators' partitions); model: the
    run's item-level prediction against gold."""
    ids = [i for i in payloads if gold.get(i) is not None and humans.get(i) is not None and model.get(i) is not None]
    return evaluation_of(kind).paired_test(ids, payloads, gold, humans, model) if ids else None
