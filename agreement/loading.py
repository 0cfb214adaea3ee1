"""Load everything a report needs with one bulk query over the task's answers, and one over its gold.

A report over 100,000 items × 3 annotators reads 300,000 answers, so this module never builds model
instances and never issues a query per item or per answer:

- one ``values_list`` over the task's items left-joined with their gold: every item's external id once,
  and the gold values;
- one ``values_list`` over the task's annotations, reading ids, flags and the value text rather than names
  (the item's external id, the annotator's, user's and batch's names): external ids are mapped from the
  item query in Python, and the few annotator and batch rows are read once each by id, which spares the
  database and the driver 300,000 copies of the same strings (about a third of the load time); on
  PostgreSQL both are read in binary format;
- JSON values are fetched as text and decoded in ONE ``json.loads`` call for the whole column, because
  decoding them one by one costs more than the query itself.

Rows are kept as columns (parallel lists) in (item, annotator) primary-key order, which the database gives
for free along the unique (item, annotator) index and which makes the digest deterministic.
Measured on 100,000 items × 3 annotators: bench/bench_report.py, figures in docs/reports.md.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Coalesce

from annotation.models import Annotation, Annotator, Batch
from tasks_app.models import Item, Task

# Bump when the report document's shape or the way it is computed changes: stored reports become stale.
REPORT_FORMAT_VERSION = 1
A = TypeVar("A")
B = TypeVar("B")
STREAM_CHUNK_ROWS = 5000  # rows per chunk when PostgreSQL streams a bulk query


@dataclass(frozen=True)
class LoadedAnswers:
    """A task's answers as columns (row i of every list is one annotation), its gold, and the digests.

    Rows are in (item, annotator) order, so each item's answers are one run of rows, starting at
    `item_starts`. Skipped answers have value None. `flagged` and `batch_ids` are numpy columns;
    `batch_ids[i]` is 0 for an answer outside any batch (its language is the task's).
    """

    items: list[str]
    annotators: list[str]
    values: list[Any]
    item_starts: list[int]
    flagged: np.ndarray
    batch_ids: np.ndarray
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
    """Read the task's items with their gold and its answers in two bulk queries (plus annotator/batch rows).

    On PostgreSQL, outside a transaction, the two queries run at once on two connections that share one
    snapshot (see read_in_parallel); otherwise one after the other.
    """
    (external_ids, gold, gold_digest), answer_columns = read_in_parallel(
        lambda: fetch_items_and_gold(task), lambda: fetch_answer_columns(task))
    item_ids, annotator_ids, texts, skipped, flagged, batch_column = answer_columns
    people = dict_by_id(Annotator.objects.filter(pk__in=set(annotator_ids)), "user__username", "kind")
    batch_ids = np.array(batch_column, dtype=np.int64)
    batches = dict_by_id(Batch.objects.filter(pk__in=np.unique(batch_ids).tolist()), "name", "language")
    for row in compress(range(len(texts)), skipped):
        texts[row] = None  # a skipped answer's value is not read (None), whatever the row holds
    items = list(map(external_ids.__getitem__, item_ids))
    names = list(map({pk: name for pk, (name, _) in people.items()}.__getitem__, annotator_ids))
    digest = answers_digest(items, names, texts)
    flags = np.array(flagged, dtype=bool)
    placed_digest = placement_digest(flags, batch_ids, batches)
    item_column = np.array(item_ids, dtype=np.int64)
    starts = np.flatnonzero(np.diff(item_column, prepend=item_column[:1] - 1)) if len(item_column) else item_column
    return LoadedAnswers(
        items=items, annotators=names, values=decode_json_column(texts), item_starts=starts.tolist(),
        flagged=flags, batch_ids=batch_ids,
        annotator_kinds={name: kind for name, kind in people.values()}, batches=batches, gold=gold,
        answers_digest=digest, inputs_digest=inputs_digest(task, digest, gold_digest, placed_digest))


def read_in_parallel(side: Callable[[], A], main: Callable[[], B]) -> tuple[A, B]:
    """Run two read-only query functions at once, both seeing the same snapshot of the database.

    The items query and the answers query each keep PostgreSQL busy for a while; on two connections the
    server runs them side by side while this process converts rows (about a fifth off a large report's
    load). `main` runs here, `side` in a thread on its own connection, which imports this transaction's
    snapshot (pg_export_snapshot), so both read the same committed state: an answer never refers to an
    item the other query did not see. Inside a transaction (a test case, a caller's atomic block) a second
    connection could not see its uncommitted rows, so both run here, one after the other, as on SQLite.
    """
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or db.in_atomic_block:
        return side(), main()
    with transaction.atomic(), db.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute("SELECT pg_export_snapshot()")
        snapshot = cursor.fetchone()[0]
        with ThreadPoolExecutor(max_workers=1) as pool:
            side_result = pool.submit(_in_snapshot, snapshot, side)
            main_result = main()
            return side_result.result(), main_result


def _in_snapshot(snapshot: str, function: Callable[[], A]) -> A:
    """Run `function` in this thread's own connection, in a read-only transaction on the given snapshot."""
    try:
        with transaction.atomic(), connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.execute("SET TRANSACTION SNAPSHOT %s", [snapshot])
            return function()
    finally:
        connections.close_all()  # the thread's connection: nobody else would ever close it


def fetch_answer_columns(task: Task) -> tuple[list[Any], ...]:
    """The one bulk query over annotations, in (item, annotator) key order, as six columns.

    Item id, annotator id, value as JSON text, skipped, flagged, batch id (0 outside any batch). Item
    external ids come from fetch_items_and_gold's query, which reads every item anyway, rather than three
    times over from this one.
    """
    rows = fetch_all(
        Annotation.objects.filter(item__task_id=task.pk)
        .annotate(value_text=Cast("value", TextField()), batch_or_0=Coalesce("batch_id", 0))
        .order_by("item_id", "annotator_id")  # PostgreSQL merge-joins along the (item, annotator) index
        .values_list("item_id", "annotator_id", "value_text", "skipped", "flagged", "batch_or_0")
    )
    # one C-level pass per column: zip(*rows) over 300,000 rows is ten times slower
    return tuple(list(map(itemgetter(column), rows)) for column in range(6))


def fetch_all(queryset: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """Run a values_list queryset and return all its rows at once; on PostgreSQL binary and streamed.

    Iterating a queryset fetches 100 rows per call (Django's GET_ITERATOR_CHUNK_SIZE): 3,000 round trips
    through Python for 300,000 rows. On PostgreSQL the rows come in binary format (the driver parses no
    ids from text) and, with libpq 17 or later, in chunks as the server produces them, so the driver
    builds rows while the server still sends (together about a third off the fetch). The columns read
    here need no conversion (ids, text, booleans).
    """
    sql, params = queryset.query.sql_with_params()
    db = connections[queryset.db]
    if db.vendor != "postgresql" or db.queries_logged:
        with db.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    import psycopg
    from django.db.backends.postgresql.base import ServerBindingCursor  # binary results need server binding

    db.ensure_connection()
    db.validate_no_broken_transaction()
    with db.wrap_database_errors, ServerBindingCursor(db.connection) as cursor:
        if psycopg.pq.version() >= 170000:  # chunked rows mode
            return list(cursor.stream(sql, params, binary=True, size=STREAM_CHUNK_ROWS))
        cursor.execute(sql, params, binary=True)
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


def answers_digest(items: Sequence[str], names: Sequence[str], texts: Sequence[str | None]) -> str:
    """sha256 over the sorted (item, annotator, value) rows, values as the database stores them (None: skipped).

    By content, not database ids: the same answers imported into a copy of the task give the same digest.
    """
    return column_digest(items, names, texts)


def placement_digest(flagged: np.ndarray, batch_ids: np.ndarray, batches: dict[int, tuple[str, str]]) -> str:
    """sha256 over each answer's flag and batch (the report counts flags and scores each batch and language)."""
    digest = hashlib.sha256(flagged.tobytes())
    digest.update(batch_ids.tobytes())
    digest.update(json.dumps(sorted(batches.items())).encode("utf-8"))
    return digest.hexdigest()


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


def inputs_digest(task: Task, answers: str, gold: str, placements: str) -> str:
    """sha256 over the answers, gold and placement digests, the task settings and the report format version."""
    payload = json.dumps([REPORT_FORMAT_VERSION, answers, gold, placements, task_settings(task)],
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def test_delay_seconds() -> float:
    """HUME_REPORT_TEST_DELAY: seconds a claimed run waits after loading, so tests can kill it mid-run."""
    try:
        return max(0.0, float(os.environ.get("HUME_REPORT_TEST_DELAY", "0") or 0))
    except ValueError:
        return 0.0
