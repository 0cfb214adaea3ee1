"""A small task of every kind with answers, for the report page's readability and chart tests.

Twelve items (three sets for clustering, four queries for the query kinds); `ann1` and `ann2` answer every
item, `ann3` only the first four, so its pairs share fewer than the default 10 items and Cohen's κ's
exclusion shows; answers are gold with seeded noise, so every chart has something to draw. The records, the
gold and the noisy answers are each kind's own (its samples.py `report_*`).
"""
from __future__ import annotations

import random
from typing import Any

from tasks_app.models import Task
from tests.kind_samples import SAMPLES
from tests.report_builders import build_task, import_answers

KINDS = tuple(SAMPLES)  # the registered kinds (each brings its report samples in its samples.py)
ANNOTATORS = {"ann1": 12, "ann2": 12, "ann3": 4}  # name → how many of the first items they answer


def records(kind: str, rng: random.Random) -> list[dict[str, Any]]:
    return SAMPLES[kind].report_records()


def answer(kind: str, gold: Any, rng: random.Random) -> Any:
    """The gold answer, changed now and then."""
    return SAMPLES[kind].report_answer(gold, rng)


def gold_of(kind: str, record: dict[str, Any]) -> Any:
    return SAMPLES[kind].report_gold(record)


def build_kind_task(kind: str, name: str | None = None) -> Task:
    """The kind's small task with its answers imported (no report computed yet)."""
    rng = random.Random(13)
    data = records(kind, rng)
    task = build_task(kind, name or f"readable-{kind}", data, **SAMPLES[kind].report_task_fields)
    rows = [{"item": str(index), "annotator": annotator, "value": answer(kind, gold_of(kind, record), rng)}
            for annotator, count in ANNOTATORS.items()
            for index, record in enumerate(data[:count], start=1)]
    import_answers(task, rows)
    return task
