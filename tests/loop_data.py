"""Small tasks of every kind, with items, gold and a batch, for the annotator's-loop tests.

Records go through the kind's own `parse_record`, exactly as an import would, so the payloads the tests
render are the payloads real items have. Batches are plain ORM rows (Batch, BatchItem, BatchAssignee).
"""
from __future__ import annotations

from typing import Any

from annotation.models import Annotator, Batch, BatchAssignee, BatchItem
from tasks_app.kinds import content_digest, get_kind
from tasks_app.models import Item, ItemGold, Task

INSTRUCTIONS = "Read **every** text before answering.\n\n- Use the keys shown under the form.\n"

TASKS: dict[str, dict[str, Any]] = {
    "classification": {"labels": ["positive", "negative", "neutral"]},
    "clustering": {},
    "reranking": {},
    "graded_relevance": {"scale_min": 0, "scale_max": 10, "scale_step": 1},
    "sts": {"scale_min": 0, "scale_max": 5, "scale_step": 0.5},
    "pairwise": {},
    "likert": {"axes": ["overall", "coherence"], "scale_min": 1, "scale_max": 7, "scale_step": 1},
}

RECORDS: dict[str, list[dict[str, Any]]] = {
    "classification": [
        {"id": "c1", "text": "The battery lasts all day and the screen is lovely.", "label": "positive"},
        {"id": "c2", "text": "It broke after two days; the seller never answered.", "label": "negative"},
    ],
    "clustering": [
        {"id": "k1", "sentences": ["Goal in the last minute", "Striker signs for a new club", "Rain expected tomorrow",
                                   "Sunny weekend ahead", "Coach sacked after defeat"],
         "labels": ["sport", "sport", "weather", "weather", "sport"]},
    ],
    "reranking": [
        {"id": "r1", "query": "how do bees make honey", "instruction": "Mark passages that answer the query.",
         "candidates": [{"id": "p1", "text": "Bees collect nectar and evaporate it in the hive.", "relevant": 1},
                        {"id": "p2", "text": "Honey badgers are fearless.", "relevant": 0},
                        {"id": "p3", "text": "Enzymes in bees turn nectar sugars into honey.", "relevant": 1}]},
        {"id": "r2", "query": "capital of Denmark",
         "candidates": [{"id": "q1", "text": "Copenhagen is the capital of Denmark.", "relevant": 1},
                        {"id": "q2", "text": "Aarhus is Denmark's second city.", "relevant": 0}]},
    ],
    "graded_relevance": [
        {"id": "g1", "query": "symptoms of flu",
         "documents": [{"id": "x1", "text": "Fever, cough and aching muscles are typical.", "score": 9},
                       {"id": "x2", "text": "Flu vaccines are updated every year.", "score": 4}]},
    ],
    "sts": [
        {"id": "s1", "sentence1": "A man is playing a guitar.", "sentence2": "A person plays an instrument.",
         "score": 3.8},
        {"id": "s2", "sentence1": "The cat sleeps.", "sentence2": "Stocks fell sharply today.", "score": 0},
    ],
    "pairwise": [
        {"id": "w1", "context": "Summarise: the meeting moved to Friday at 10.", "a": "Meeting now Friday 10am.",
         "b": "There is a meeting.", "preferred": "a"},
        {"id": "w2", "context": "Summarise: prices rose 3% in May.", "a": "Prices changed.",
         "b": "Prices rose 3% in May.", "preferred": "b"},
    ],
    "likert": [
        {"id": "l1", "context": "Article about a new bridge opening in the city.",
         "text": "A new bridge opened, easing traffic.", "scores": {"overall": 6, "coherence": 7}},
    ],
}


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
