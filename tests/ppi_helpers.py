"""Studies for the PPI tests: a task whose every item a judge answered and people a sample, built the way the
report tests build theirs (tests/report_builders.py: the kind's own parser, answers validated by the task)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tasks_app.models import Item, Task
from tests.report_builders import build_task, import_answers

JUDGE = "judge-llm"


def likert_records(n: int) -> list[dict[str, Any]]:
    return [{"id": str(i), "context": f"context {i}", "text": f"summary {i}"} for i in range(1, n + 1)]


def set_strata(task: Task, field: str, values: Sequence[str]) -> None:
    """Give the items (in position order) a system or group, as an import of records with that field does."""
    for item, value in zip(task.items.order_by("position"), values, strict=True):
        setattr(item, field, value)
        item.save(update_fields=[field])


def rated_likert_study(name: str, n_items: int, labelled: Sequence[int], *, seed: int = 0,
                       systems: Sequence[str] | None = None, judge_bias: float = 1.0) -> tuple[Task, np.ndarray]:
    """A 1–7 likert task on one axis `overall`: a judge rates every item `judge_bias` too high (with noise), and
    alice rates the items at positions `labelled` (0-based), bob every third of those too. Returns the task and
    the people's true ratings of every item."""
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(4, 1.5, n_items)), 1, 7)
    judge = np.clip(np.round(truth + judge_bias + rng.normal(0, 1, n_items)), 1, 7)
    task = build_task("likert", name, likert_records(n_items), axes=["overall"])
    if systems is not None:
        set_strata(task, "system", systems)
    rows = [{"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm", "value": {"overall": int(judge[i])}}
            for i in range(n_items)]
    for k, i in enumerate(labelled):
        rows.append({"item": str(i + 1), "annotator": "alice", "value": {"overall": int(truth[i])}})
        if k % 3 == 0:
            rows.append({"item": str(i + 1), "annotator": "bob",
                         "value": {"overall": int(np.clip(truth[i] + 1, 1, 7))}})
    import_answers(task, rows)
    return task, truth


def item_positions(task: Task) -> dict[str, int]:
    return {external_id: position for external_id, position in Item.objects.filter(task=task)
            .values_list("external_id", "position")}
