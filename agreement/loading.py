"""Load everything a report needs with one bulk query over the task's answers, and one over its gold.

A report over 100,000 items × 3 annotators reads 300,000 answers, so this module never builds model
instances and never issues a query per item or per answer:

- one ``values_list`` over the task's items left-joined with their gold: every item's external id once,
  and the gold values;
- one ``values_list`` over the task's annotations, reading ids rather than names (the item's external id,
  the annotator's, user's and batch's names): external ids are mapped from the item query in Python, and
  the few annotator and batch rows are read once each by id, which spares the database and the driver
  300,000 copies of the same strings (about a third of the load time);
- JSON values are fetched as text and decoded in ONE ``json.loads`` call for the whole column, because
  decoding them one by one costs more than the query itself.

Rows are kept as columns (parallel lists) in (item, annotator) primary-key order, which the database gives
for free along the unique (item, annotator) index and which makes the digest deterministic.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import Any

from django.db import connections
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from annotation.models import Annotation, Annotator, Batch
from tasks_app.models import Item, Task

# Bump when the report document's shape or the way it is computed changes: stored reports become stale.
REPORT_FORMAT_VERSION = 1


@dataclass(frozen=True)
class LoadedAnswers:
    """A task's answers as columns (row i of every list is one annotation), its gold, and the digests.

    Skipped answers have value None. `batch_ids[i]` is None for answers outside any batch; their language
    is the task's.
    """

    items: list[str]
    annotators: list[str]
    values: list[Any]
    flagged: list[bool]
    batch_ids: list[int | None]
    annotator_kinds: dict[str, str]
    batches: dict[int, tuple[str, str]]
    gold: dict[str, Any]
    answers_digest: str
    inputs_digest: str

    def __len__(self) -> int:
        return len(self.items)


def task_settings(task: Task) -> dict[str, Any]:
    """The task fields scoring depends on; a change to any of them makes a stored report stale."""
    lo, hi, step = task.scale
    return {"kind": task.kind, "language": task.language, "labels": list(task.labels or []), "scale": [lo, hi, step],
            "axes": list(task.axes or []), "mteb_task_name": task.mteb_task_name, "mteb_subset": task.mteb_subset}


def load_answers(task: Task) -> LoadedAnswers:
    """Read the task's items with their gold, then its answers, in two bulk queries (plus annotator/batch rows)."""
    external_ids, gold, gold_digest = fetch_items_and_gold(task)
    _, annotator_ids, items, texts, skipped, flagged, batch_ids = fetch_answer_columns(task, external_ids)
    people = dict_by_id(Annotator.objects.filter(pk__in=set(annotator_ids)), "user__username", "kind")
    batches = dict_by_id(Batch.objects.filter(pk__in=set(batch_ids) - {None}), "name", "language")
    values = decode_json_column(texts)
    for row in list(compress(range(len(values)), skipped)):
        values[row] = None
    names = list(map({pk: name for pk, (name, _) in people.items()}.__getitem__, annotator_ids))
    digest = answers_digest(items, names, texts, skipped)
    return LoadedAnswers(
        items=items, annotators=names, values=values, flagged=flagged, batch_ids=batch_ids,
        annotator_kinds={name: kind for name, kind in people.values()}, batches=batches, gold=gold,
        answers_digest=digest, inputs_digest=inputs_digest(task, digest, gold_digest))


def fetch_answer_columns(task: Task, external_ids: dict[int, str]) -> tuple[list[Any], ...]:
    """The one bulk query over annotations, in (item, annotator) key order, split into columns.

    Column 2 is the item's external id, looked up in `external_ids` (item id → external id, from
    fetch_items_and_gold) rather than selected: that query reads every item anyway, and selecting it here
    would send the same 100,000 strings three times over.
    """
    rows = fetch_all(
        Annotation.objects.filter(item__task_id=task.pk)
        .annotate(value_text=Cast("value", TextField()))
        .order_by("item_id", "annotator_id")  # PostgreSQL merge-joins along the (item, annotator) index
        .values_list("item_id", "annotator_id", "value_text", "skipped", "flagged", "batch_id")
    )
    if not rows:
        return tuple([] for _ in range(7))
    # one C-level pass per column: zip(*rows) over 300,000 rows is ten times slower
    item_ids, annotator_ids, texts, skipped, flagged, batch_ids = (
        list(map(itemgetter(column), rows)) for column in range(6))
    items = list(map(external_ids.__getitem__, item_ids))
    return item_ids, annotator_ids, items, texts, skipped, flagged, batch_ids


def fetch_all(queryset: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """Run a values_list queryset with ONE fetchall.

    Iterating a queryset fetches 100 rows per call (Django's GET_ITERATOR_CHUNK_SIZE): 3,000 round trips
    through Python for 300,000 rows. The columns read here need no conversion (ids, text, booleans).
    """
    sql, params = queryset.query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def dict_by_id(queryset: Any, *fields: str) -> dict[int, tuple[Any, ...]]:
    return {pk: tuple(rest) for pk, *rest in queryset.values_list("pk", *fields)}


def fetch_items_and_gold(task: Task) -> tuple[dict[int, str], dict[str, Any], str]:
    """One query over the task's items and their gold: external id by item id, gold by external id, gold digest.

    The digest covers the items that have gold, in item order, exactly as a query over ItemGold alone would.
    """
    rows = fetch_all(
        Item.objects.filter(task_id=task.pk)
        .annotate(gold_text=Cast("gold__value", TextField()))  # LEFT JOIN: SQL NULL when an item has no gold
        .order_by("id")
        .values_list("id", "external_id", "gold_text")
    )
    external_ids = dict(map(itemgetter(0, 1), rows))
    with_gold = [row for row in rows if row[2] is not None]
    keys, texts = list(map(itemgetter(1), with_gold)), list(map(itemgetter(2), with_gold))
    values = decode_json_column(texts)
    gold = dict(zip(keys, values, strict=True))
    if None in gold.values():  # a JSON null gold is no gold
        gold = {key: value for key, value in gold.items() if value is not None}
    return external_ids, gold, column_digest(keys, texts)


def decode_json_column(texts: Sequence[str | None]) -> list[Any]:
    """Decode a column of JSON texts with one parser call (SQL NULL → None)."""
    if not texts:
        return []
    try:
        joined = ",".join(texts)  # type: ignore[arg-type]
    except TypeError:  # SQL NULLs among the texts
        joined = ",".join("null" if t is None else t for t in texts)
    values = json.loads(f"[{joined}]")
    if len(values) != len(texts):  # a text holding several values would shift every later row
        raise ValueError("a stored JSON value did not decode to exactly one value")
    return values


def answers_digest(items: Sequence[str], names: Sequence[str], texts: Sequence[str | None],
                   skipped: Sequence[bool]) -> str:
    """sha256 over the sorted (item, annotator, value, skipped) rows; values as the database stores them."""
    return column_digest(items, names, texts, ["1" if s else "0" for s in skipped])


def column_digest(*columns: Sequence[str | None]) -> str:
    """sha256 of equally long text columns, each joined with NUL (PostgreSQL text never holds one).

    Joining is a C loop, five times faster than JSON-encoding 300,000 rows; a column whose joined text
    holds more NULs than separators (possible on SQLite) is JSON-encoded instead, so the digest stays
    unambiguous.
    """
    digest = hashlib.sha256(str(len(columns[0]) if columns else 0).encode())
    for column in columns:
        try:
            text, mark = "\x00".join(column), b"\x01"  # type: ignore[arg-type]
        except TypeError:  # value texts can be None: "None" is no JSON text, so it cannot be confused
            text, mark = "\x00".join(map(str, column)), b"\x01"
        if text.count("\x00") != max(len(column) - 1, 0):
            text, mark = json.dumps(list(column), ensure_ascii=False), b"\x02"
        digest.update(mark + text.encode("utf-8"))
    return digest.hexdigest()


def inputs_digest(task: Task, answers: str, gold: str) -> str:
    """sha256 over the answers and gold digests, the task settings and the report format version."""
    payload = json.dumps([REPORT_FORMAT_VERSION, answers, gold, task_settings(task)],
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def test_delay_seconds() -> float:
    """HUME_REPORT_TEST_DELAY: seconds a claimed run waits after loading, so tests can kill it mid-run."""
    try:
        return max(0.0, float(os.environ.get("HUME_REPORT_TEST_DELAY", "0") or 0))
    except ValueError:
        return 0.0
