"""A task kind's items, seen by a model: which texts it embeds, how the similarities become MTEB-style
scores (measures/model_scoring.py), and what the humans' consensus is per item.

`evaluate(kind, model, items, truth)` takes items as (id, payload) and truth as {item id: value in the
gold format of tasks_app/kinds.py} (clustering: a list of partitions), and returns (scores, predictions
by item id). Items without a truth value are left out of that score.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agreement.model_runs.similarity import embed, similarity
from measures import model_scoring as scoring
from measures.mteb_texts import query_text

Items = Sequence[tuple[int, dict[str, Any]]]
KINDS = ("sts", "reranking", "graded_relevance", "clustering", "classification", "pairwise", "likert")
MAIN_METRIC = {"sts": "cosine_spearman", "reranking": "map_at_1000", "graded_relevance": "ndcg_at_10",
               "clustering": "v_measure", "classification": "accuracy", "pairwise": "accuracy",
               "likert": "sage_mean"}
ENCODER_ONLY = {"classification": "a classifier needs vectors"}


class UnsupportedKind(ValueError):
    """This model cannot score this kind of task."""


def item_texts(kind: str, payload: dict[str, Any]) -> list[str]:
    """Every text of one item a model reads (what a chunk embeds ahead of scoring)."""
    if kind == "sts":
        return [payload["sentence1"], payload["sentence2"]]
    if kind == "reranking":
        return [query_of(payload), *(c["text"] for c in payload["candidates"])]
    if kind == "graded_relevance":
        return [payload["query"], *(d["text"] for d in payload["documents"])]
    if kind == "pairwise":
        return [payload["context"], payload["a"], payload["b"]]
    if kind == "likert":
        return [payload["context"], payload["text"]]
    if kind == "clustering":
        return list(payload["sentences"])
    if kind == "classification":
        return [payload["text"]]
    raise UnsupportedKind(f"task kind {kind!r} has no model scoring")


def query_of(payload: dict[str, Any]) -> str:
    """The query text a model embeds: with its instruction after it, as MTEB (measures/mteb_texts.py)."""
    return query_text(payload["query"], payload.get("instruction"))


def check_protocol(kind: str, protocol: str) -> None:
    """Every kind follows MTEB; classification alone has another protocol ("pooled", scoring.classification)."""
    allowed = scoring.CLASSIFICATION_PROTOCOLS if kind == "classification" else ("mteb",)
    if protocol not in allowed:
        raise UnsupportedKind(f"protocol {protocol!r} is not one of a {kind} task's: {', '.join(allowed)}")


def check_supported(kind: str, model: Any) -> None:
    if kind not in KINDS:
        raise UnsupportedKind(f"task kind {kind!r} has no model scoring; supported: {', '.join(KINDS)}")
    if kind in ENCODER_ONLY and not model.is_encoder:
        raise UnsupportedKind(f"{model.name} ({model.backend} {model.metric}) cannot score a {kind} task: "
                              f"{ENCODER_ONLY[kind]}, and a classical metric has none")


def evaluate(kind: str, model: Any, items: Items, truth: dict[int, Any], protocol: str = "mteb"
             ) -> tuple[dict[str, Any], dict[int, Any]]:
    """protocol: "mteb" (every kind), or "pooled" (classification only: scoring.classification)."""
    check_supported(kind, model)
    check_protocol(kind, protocol)
    kept = [(i, p) for i, p in items if truth.get(i) is not None]
    if not kept:
        raise scoring.CannotScore("no item has a value to score against")
    options = {"protocol": protocol} if kind == "classification" else {}
    scores, predictions = EVALUATORS[kind](model, kept, truth, **options)
    main = MAIN_METRIC[kind]
    if kind == "clustering" and not model.is_encoder:
        main = "v_measure_agglomerative"
    return {"main_metric": main, **scores}, {i: p for (i, _), p in zip(kept, predictions, strict=True)}


def _sts(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    sims = similarity(model, [p["sentence1"] for _, p in items], [p["sentence2"] for _, p in items])
    return scoring.sts(sims, [float(truth[i]) for i, _ in items])


def _query_similarities(model: Any, items: Items, field: str) -> list[tuple[list[str], np.ndarray]]:
    queries, docs, owners = [], [], []
    for n, (_, p) in enumerate(items):
        for doc in p[field]:
            queries.append(query_of(p))
            docs.append(doc["text"])
            owners.append(n)
    sims = similarity(model, queries, docs)
    out, owners_a = [], np.asarray(owners)
    for n, (_, p) in enumerate(items):
        out.append(([d["id"] for d in p[field]], sims[owners_a == n]))
    return out


def _reranking(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    sims = _query_similarities(model, items, "candidates")
    return scoring.reranking(
        [(ids, s, [truth[i].get(c, 0) for c in ids]) for (i, _), (ids, s) in zip(items, sims, strict=True)])


def _graded(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    sims = _query_similarities(model, items, "documents")
    return scoring.graded_relevance(
        [(ids, s, [truth[i].get(d, 0) for d in ids]) for (i, _), (ids, s) in zip(items, sims, strict=True)])


def _pairwise(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    contexts = [p["context"] for _, p in items]
    sim_a = similarity(model, contexts, [p["a"] for _, p in items])
    sim_b = similarity(model, contexts, [p["b"] for _, p in items])
    return scoring.pairwise(sim_a, sim_b, [truth[i] for i, _ in items])


def _likert(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    sims = similarity(model, [p["context"] for _, p in items], [p["text"] for _, p in items])
    axes = sorted({a for i, _ in items for a in truth[i]})
    return scoring.likert(sims, {a: [truth[i].get(a) for i, _ in items] for a in axes})


def _clustering(model: Any, items: Items, truth: dict[int, Any]) -> tuple[dict[str, Any], list[Any]]:
    sets = []
    for i, p in items:
        sentences = list(p["sentences"])
        if model.is_encoder:
            vectors = embed(model, sentences)
            distances = scoring.cosine_distances(vectors)
        else:
            vectors, distances = None, _pair_distances(model, sentences)
        sets.append((vectors, distances, truth[i]))
    return scoring.clustering(sets)


def _pair_distances(model: Any, texts: list[str]) -> np.ndarray:
    """1 − similarity over all pairs, symmetrised (BM25 and ROUGE are not symmetric), 0 on the diagonal."""
    n = len(texts)
    rows, cols = np.triu_indices(n, k=1)
    forward = similarity(model, [texts[r] for r in rows], [texts[c] for c in cols])
    backward = similarity(model, [texts[c] for c in cols], [texts[r] for r in rows])
    sim = (forward + backward) / 2
    top = sim.max() if sim.size and sim.max() > 1 else 1.0  # BM25 is unbounded: scale into [0, 1]
    matrix = np.zeros((n, n))
    matrix[rows, cols] = matrix[cols, rows] = 1.0 - sim / top
    return matrix


def _classification(model: Any, items: Items, truth: dict[int, Any], protocol: str = "mteb"
                    ) -> tuple[dict[str, Any], list[Any]]:
    vectors = embed(model, [p["text"] for _, p in items])
    return scoring.classification(vectors, [truth[i] for i, _ in items], protocol=protocol)


EVALUATORS: dict[str, Callable[..., tuple[dict[str, Any], list[Any]]]] = {
    "sts": _sts, "reranking": _reranking, "graded_relevance": _graded, "pairwise": _pairwise,
    "likert": _likert, "clustering": _clustering, "classification": _classification,
}


# ---------------------------------------------------------------- the humans' consensus per item


def _majority(values: list[Any]) -> Any:
    counts = Counter(values)
    top = max(counts.values())
    return sorted(v for v, c in counts.items() if c == top)[0]  # docs/metrics.md: tie → lexicographically first


def _mean_by_key(values: list[dict[str, float]]) -> dict[str, float]:
    keys = {k for v in values for k in v}
    return {k: float(np.mean([v[k] for v in values if k in v])) for k in keys}


def consensus(kind: str, answers: list[Any]) -> Any:
    """The humans' answer to score a model against (None when nobody answered)."""
    if not answers:
        return None
    if kind in ("classification", "pairwise"):
        return _majority(answers)
    if kind == "sts":
        return float(np.mean([float(a) for a in answers]))
    if kind == "reranking":
        return {k: int(v >= 0.5) for k, v in _mean_by_key(answers).items()}  # majority, a tie counts relevant
    if kind in ("graded_relevance", "likert"):
        return _mean_by_key(answers)
    if kind == "clustering":
        return answers  # every annotator's partition is a reference; the item's figure is their mean
    raise UnsupportedKind(f"task kind {kind!r} has no model scoring")


def gold_truth(kind: str, gold: Any) -> Any:
    """Gold in the shape evaluate() wants (clustering: one reference partition)."""
    if gold is None:
        return None
    return [gold] if kind == "clustering" else gold
