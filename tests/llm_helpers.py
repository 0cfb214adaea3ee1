"""Builders shared by the LLM tests: small tasks of each kind whose item texts carry server markers."""
from __future__ import annotations

from typing import Any

from annotation.llm.models import LLMAnnotatorConfig
from annotation.llm.run_control import create_llm_annotator
from annotation.models import Batch, BatchItem
from tasks_app.core.kinds import content_digest, get_kind
from tasks_app.models import Item, ItemGold, Task
from tests.kind_samples import SAMPLES

API_KEY_ENV = "HUME_TEST_API_KEY"
INSTRUCTIONS = "Read carefully. INSTRUCTION-MARK-7731 applies to every item."
GOLD_MARK = 7.77  # a gold score no prompt may ever contain (graded relevance's samples.py `llm_record`)


def record(kind: str, marker: str, i: int) -> tuple[dict[str, Any], Any]:
    """(import record with gold, the valid answer the fake server gives for it): the kind's own (its samples.py
    `llm_record`); a kind without one has no LLM samples."""
    make = SAMPLES[kind].llm_record
    if make is None:
        raise ValueError(kind)
    return make(marker, i)


def make_task(kind: str, n: int, *, prefix: str = "m", first: int = 1, name: str | None = None,
              **task_fields: Any) -> tuple[Task, list[Item], dict[str, Any]]:
    """A task of `kind` with n items (markers [m01]…), their gold, and the answers a judge will give."""
    fields = {**SAMPLES[kind].llm_task_fields, **task_fields}
    task = Task.objects.create(name=name or f"{kind} task", kind=kind, language="eng-Latn",
                               instructions=INSTRUCTIONS, **fields)
    items, answers = [], {}
    for i in range(n):
        marker = f"[{prefix}{first + i:02d}]"
        raw, answer = record(kind, marker, i)
        parsed = get_kind(kind).parse_record(raw, task)
        item = Item.objects.create(task=task, uid=content_digest(task.name, parsed.payload), position=i,
                                   external_id=parsed.external_id or marker, payload=parsed.payload)
        if parsed.gold is not None:
            ItemGold.objects.create(item=item, value=parsed.gold)
        items.append(item)
        answers[marker] = answer
    return task, items, answers


def make_batch(task: Task, items: list[Item], name: str = "batch 1", overlap: int = 2) -> Batch:
    batch = Batch.objects.create(task=task, name=name, language=task.language, overlap=overlap)
    BatchItem.objects.bulk_create([BatchItem(batch=batch, item=item, position=i) for i, item in enumerate(items)])
    return batch


def make_judge(name: str, base_url: str, **overrides: Any) -> LLMAnnotatorConfig:
    config = {"base_url": base_url, "model": f"model-{name}", "api_key_env": API_KEY_ENV, "max_concurrency": 2,
              "requests_per_minute": 6000, "timeout_seconds": 1.0, "max_retries": 2, "max_answer_retries": 1}
    config.update(overrides)
    return create_llm_annotator(name, **config)
