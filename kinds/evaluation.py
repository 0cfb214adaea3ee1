"""What every kind's model evaluation shares (each kind's own is kinds/<name>/evaluation.py): the base class,
the model access it is given, and the helpers the kinds use.

A kind says which texts of an item a model reads, how the model's similarities become MTEB-style scores
(measures/model_scoring.py), what the humans' consensus per item is, and which paired test compares the
model with the humans (measures/significance.py). The kind never reaches the model's cache or backend
itself: the app (agreement/model_runs/evaluate.py) hands it a `ModelAccess`, so the kind stays free of the
apps and the data flows one way.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

from measures import significance
from measures.mteb_texts import query_text

Items = Sequence[tuple[int, dict[str, Any]]]
Evaluated = tuple[dict[str, Any], list[Any]]  # (scores, the prediction per item, in the items' order)


class ModelAccess(Protocol):
    """A model as a kind's evaluation sees it: what it is and the two ways to ask it (cached by the app)."""

    is_encoder: bool

    def similarity(self, a: list[str], b: list[str]) -> np.ndarray: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


class ModelEvaluation:
    """How models are run and scored on one kind. Subclasses declare `main_metric` and define `item_texts`,
    `evaluate` and `paired_test`; the defaults below fit most kinds."""

    main_metric: ClassVar[str]  # the MTEB score a model run is ranked by
    protocols: ClassVar[tuple[str, ...]] = ("mteb",)  # how the scores may be computed ("mteb": as MTEB)
    encoder_only: ClassVar[str | None] = None  # why a model without vectors cannot score this kind (None: it can)

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        """Every text of one item a model reads (what a chunk embeds ahead of scoring)."""
        raise NotImplementedError

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        raise NotImplementedError

    def main_metric_for(self, model: ModelAccess) -> str:
        return self.main_metric

    def consensus(self, answers: list[Any]) -> Any:
        """The humans' answer to score a model against (`answers` is never empty)."""
        raise NotImplementedError

    def gold_truth(self, gold: Any) -> Any:
        """Gold in the shape `evaluate` wants."""
        return gold

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        """The paired test of humans against the model on these items (all with gold, consensus and prediction)."""
        raise NotImplementedError

    def protocol_note(self, gold: dict[str, Any], protocol: str) -> str:
        """Which protocol scored a run, in words, from its gold scores and protocol (the model-run rows)."""
        return "pooled" if protocol == "pooled" else "MTEB's protocol"

    def too_few_items(self, truth: list[Any]) -> str | None:
        """Why a score over these reference values is too thin to compare or rank (None: enough). Ranking
        scores average queries and clustering sets: no such floor by default."""
        return None


class LabelEvaluation(ModelEvaluation):
    """What the kinds with one label per item share (classification, pairwise): accuracy is the main score,
    the humans' consensus is their majority label, and the paired test is McNemar's exact test of who is
    right on the items both answered."""

    main_metric = "accuracy"

    def consensus(self, answers: list[Any]) -> Any:
        return majority(answers)

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        return significance.mcnemar_exact([humans[i] == gold[i] for i in ids], [model[i] == gold[i] for i in ids])


def query_of(payload: dict[str, Any]) -> str:
    """The query text a model embeds: with its instruction after it, as MTEB (measures/mteb_texts.py)."""
    return query_text(payload["query"], payload.get("instruction"))


def query_similarities(model: ModelAccess, items: Items, field: str) -> list[tuple[list[str], np.ndarray]]:
    """Per item, (its documents' ids, the model's similarity of the query to each) for the `field` list."""
    if not items:
        return []
    queries, docs = [], []
    for _, p in items:
        query = query_of(p)
        queries.extend(query for _ in p[field])
        docs.extend(doc["text"] for doc in p[field])
    sims = model.similarity(queries, docs)
    # each item's documents are consecutive: split at the running counts (a mask per item compared every pair
    # with every item, quadratic in the items)
    per_item = np.split(sims, np.cumsum([len(p[field]) for _, p in items])[:-1])
    return [([d["id"] for d in p[field]], part) for (_, p), part in zip(items, per_item, strict=True)]


def majority(values: list[Any]) -> Any:
    counts = Counter(values)
    top = max(counts.values())
    return sorted(v for v, c in counts.items() if c == top)[0]  # docs/metrics.md: tie → lexicographically first


def mean_by_key(values: list[dict[str, float]]) -> dict[str, float]:
    keys = {k for v in values for k in v}
    return {k: float(np.mean([v[k] for v in values if k in v])) for k in keys}


def query_paired_test(ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                      humans: dict[int, Any], model: dict[int, Any], field: str,
                      score: Callable[[np.ndarray, np.ndarray], float]) -> dict[str, Any] | None:
    """A paired permutation test over queries of `score(truth, ranking scores)`: the humans' mean judgments
    against the model's ranking of the query's `field` documents."""
    h, m = [], []
    for i in ids:
        docs = [d["id"] for d in payloads[i][field]]
        truth = np.array([gold[i].get(d, 0) for d in docs], dtype=float)
        if not (truth > 0).any():  # no relevant document: 0 for both, as the scores count it (trec_scoring)
            h.append(0.0)
            m.append(0.0)
            continue
        h.append(score(truth, np.array([humans[i].get(d, 0) for d in docs], dtype=float)))
        m.append(score(truth, significance.ranking_scores(docs, model[i])))
    return significance.paired_permutation(h, m, "queries")
