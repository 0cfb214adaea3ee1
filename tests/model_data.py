"""Small English study items of every kind for the model-run tests: each kind's own (its samples.py:
hand-written records with gold, two humans' answers and the task's settings), read through the registry."""
from __future__ import annotations

from typing import Any

from tests.kind_samples import SAMPLES, SampleTable

TASK_FIELDS = SampleTable("model_task_fields")  # {kind: the model task's settings}


def records(kind: str) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """(records with gold, {annotator: answers in item order}) for a kind."""
    return SAMPLES[kind].model_records, SAMPLES[kind].model_humans


def build_model_task(kind: str, name: str | None = None) -> Any:
    from tests.report_builders import answers_from_columns, build_task, import_answers

    recs, humans = records(kind)
    task = build_task(kind, name or f"models-{kind}", recs, **TASK_FIELDS.get(kind, {}))
    import_answers(task, answers_from_columns(humans))
    return task
