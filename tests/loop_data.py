"""Small tasks of every kind, with items, gold and a batch, for the annotator's-loop tests.

The tasks' settings and records are each kind's own samples (kinds/<name>/samples.py), read through the
registry.
Records go through the kind's own `parse_record`, exactly as an import would, so the payloads the tests
render are the payloads real items have. Batches are plain ORM rows (Batch, BatchItem, BatchAssignee).
"""
from __future__ import annotations

from typing import Any

from annotation.models import Annotator, Batch, BatchAssignee, BatchItem
from tasks_app.core.kinds import content_digest, get_kind
from tasks_app.models import Item, ItemGold, Task
from tests.kind_samples import SampleTable

INSTRUCTIONS = "Read **every** text before answering.\n\n- Use the keys shown under the form.\n"

# each kind's loop samples (its samples.py): {kind: Task fields} and {kind: records with gold}, live
TASKS = SampleTable("task_fields")
RECORDS = SampleTable("records")


def make_task(kind: str, *, name: str | None = None, language: str = "eng-Latn", **overrides: Any) -> Task:
    fields = {**TASKS[kind], **overrides}
    return Task.objects.create(name=name or f"{kind} task", kind=kind, language=language,
                               instructions=fields.pop("instructions", INSTRUCTIONS), **fields)


def add_items(task: Task, records: list[dict[str, Any]], *, gold: list[Any] | None = None) -> list[Item]:
    """Parse records with the kind (as import does) and store items; `gold` replaces the parsed gold values."""
    items = []
    for position, record in enumerate(records):
        parsed = get_kind(task.kind).parse_record(record, task)
        external_id = parsed.external_id or str(position)
        item = Item.objects.create(task=task, uid=content_digest(task.name, external_id, parsed.payload),
                                   external_id=external_id, position=position,
                                   payload=parsed.payload, in_sample=True)
        value = gold[position] if gold is not None else parsed.gold
        if value is not None:
            ItemGold.objects.create(item=item, value=value)
        items.append(item)
    return items


def make_batch(task: Task, annotators: list[Annotator], items: list[Item], *, name: str = "batch 1",
               overlap: int = 1, language: str | None = None) -> Batch:
    batch = Batch.objects.create(task=task, name=name, language=language or task.language, overlap=overlap)
    BatchItem.objects.bulk_create(BatchItem(batch=batch, item=item, position=i) for i, item in enumerate(items))
    for annotator in annotators:
        BatchAssignee.objects.create(batch=batch, annotator=annotator)
    return batch


def batch_of(kind: str, annotators: list[Annotator], **task_overrides: Any) -> Batch:
    """A task of `kind` with its sample records, in one batch for `annotators`."""
    task = make_task(kind, **task_overrides)
    return make_batch(task, annotators, add_items(task, RECORDS[kind]))
