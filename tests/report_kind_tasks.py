"""A small task of every kind with answers, for the report page's readability and chart tests.

Twelve items (three sets for clustering, four queries for the query kinds); `ann1` and `ann2` answer every
item, `ann3` only the first four, so its pairs share fewer than the default 10 items and Cohen's κ's
exclusion shows; answers are gold with seeded noise, so every chart has something to draw.
"""
from __future__ import annotations

import random
from typing import Any

from tasks_app.models import Task
from tests.report_builders import build_task, import_answers

KINDS = ("classification", "pairwise", "clustering", "reranking", "graded_relevance", "sts", "likert")
ANNOTATORS = {"ann1": 12, "ann2": 12, "ann3": 4}  # name → how many of the first items they answer
LABELS = ["neg", "neu", "pos"]


def records(kind: str, rng: random.Random) -> list[dict[str, Any]]:
    if kind == "classification":
        return [{"text": f"text {i}", "label": LABELS[i % 3]} for i in range(12)]
    if kind == "pairwise":
        return [{"context": f"c{i}", "a": f"a{i}", "b": f"b{i}", "preferred": ("a", "b", "tie")[i % 3]}
                for i in range(12)]
    if kind == "clustering":
        return [{"sentences": [f"s{i}-{j}" for j in range(6)], "labels": ["x", "x", "y", "y", "z", "z"]}
                for i in range(3)]
    if kind == "reranking":
        return [{"query": f"q{i}", "candidates": [{"id": f"c{j}", "text": f"c{i}-{j}", "relevant": int(j < 2)}
                                                  for j in range(5)]} for i in range(4)]
    if kind == "graded_relevance":
        return [{"query": f"q{i}", "documents": [{"id": f"d{j}", "text": f"d{i}-{j}", "score": (4 - j) * 2}
                                                 for j in range(5)]} for i in range(4)]
    if kind == "sts":
        return [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": round(i * 5 / 11 * 2) / 2} for i in range(12)]
    return [{"context": f"c{i}", "text": f"t{i}", "scores": {"overall": 1 + i % 7}} for i in range(12)]


def answer(kind: str, gold: Any, rng: random.Random) -> Any:
    """The gold answer, changed now and then."""
    noisy = rng.random() < 0.3
    if kind == "classification":
        return rng.choice(LABELS) if noisy else gold
    if kind == "pairwise":
        return rng.choice(["a", "b", "tie"]) if noisy else gold
    if kind == "clustering":
        labels = list(gold)
        if noisy:
            labels[0] = labels[-1]
        return [ord(label[0]) - ord("x") for label in labels]
    if kind == "reranking":
        return {key: (1 - value if rng.random() < 0.2 else value) for key, value in gold.items()}
    if kind == "graded_relevance":
        return {key: min(10, max(0, int(value) + rng.choice([-2, 0, 0, 2]))) for key, value in gold.items()}
    if kind == "sts":
        return min(5.0, max(0.0, gold + rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0])))
    return {"overall": min(7, max(1, gold["overall"] + rng.choice([-1, 0, 0, 1])))}


def gold_of(kind: str, record: dict[str, Any]) -> Any:
    return {"classification": lambda r: r["label"], "pairwise": lambda r: r["preferred"],
            "clustering": lambda r: r["labels"],
            "reranking": lambda r: {c["id"]: c["relevant"] for c in r["candidates"]},
            "graded_relevance": lambda r: {d["id"]: d["score"] for d in r["documents"]},
            "sts": lambda r: r["score"], "likert": lambda r: r["scores"]}[kind](record)


def build_kind_task(kind: str, name: str | None = None) -> Task:
    """The kind's small task with its answers imported (no report computed yet)."""
    rng = random.Random(13)
    data = records(kind, rng)
    fields: dict[str, Any] = {"labels": LABELS} if kind == "classification" else {}
    if kind == "likert":
        fields["axes"] = ["overall"]
    task = build_task(kind, name or f"readable-{kind}", data, **fields)
    rows = [{"item": str(index), "annotator": annotator, "value": answer(kind, gold_of(kind, record), rng)}
            for annotator, count in ANNOTATORS.items()
            for index, record in enumerate(data[:count], start=1)]
    import_answers(task, rows)
    return task
