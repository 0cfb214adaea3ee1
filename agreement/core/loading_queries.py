"""The two bulk queries a report loads with, as columns: on PostgreSQL each column arrives as ONE value.

A report over 100,000 items × 3 annotators reads 300,000 answers. Read as rows, the driver builds 300,000
Python tuples and 1.8 million objects in them, which cost more than the server's work. On PostgreSQL the
answers query therefore wraps the row query (the same ORM queryset, in (item, annotator) key order) in
aggregates that hand over whole columns: the item, annotator and batch ids as one ``bytea`` each (eight
bytes per row, read by ``np.frombuffer``) and the JSON values as one text (the rows' texts joined with
commas, decoded by one ``json.loads``). The items query does the same for item ids, external ids (one JSON
array) and gold. Measured on the bench (bench/bench_report.py): the answers read goes from about 0.3 s to
0.2 s, most of which is now the server's join, and the per-row Python mapping disappears.

An aggregate without ORDER BY reads its input in the order of a sorted subquery: PostgreSQL documents
this as what usually happens, not as a guarantee (an ORDER BY inside each aggregate is guaranteed, but
sorts 300,000 rows once per column: twice the time). So the ids read are checked to be in key order, and
if they ever are not, the rows are read again the row-based way, which orders them explicitly.

Bound: PostgreSQL holds one value in at most 1 GB, so a task read this way can have up to about 130
million answers (eight bytes each per id column) whose JSON values together take under 1 GB of text, far
beyond any human study; a larger one fails with the database's error on the report page, not silently.

SQLite (the embedded default) has no binary aggregates: it reads rows and turns them into the same
columns (``answer_columns_by_rows``), so both backends give identical columns for the same rows, which
the tests check against each other on PostgreSQL.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
from django.db import connections
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Coalesce

from annotation.models import Annotation
from tasks_app.models import Item, Task

STREAM_CHUNK_ROWS = 5000  # rows per chunk when PostgreSQL streams a row query
# One eight-byte big-endian integer per row: batch id (0 outside any batch) × 4 + flagged × 2 + skipped.
STATES_SQL = "int8send(batch_or_0 * 4 + flagged::int * 2 + skipped::int)"
ANSWERS_AGGREGATE_SQL = (
    "SELECT count(*), string_agg(int8send(item_id), ''::bytea), string_agg(int8send(annotator_id), ''::bytea), "
    f"string_agg({STATES_SQL}, ''::bytea), string_agg(COALESCE(value_text, 'null'), ',') FROM ({{rows}}) AS answers"
)
# string_agg skips SQL NULLs: the gold columns hold exactly the items that have a gold row, in item order.
ITEMS_AGGREGATE_SQL = (
    "SELECT string_agg(int8send(id), ''::bytea), json_agg(external_id)::text, "
    "string_agg(int8send(id), ''::bytea) FILTER (WHERE gold_text IS NOT NULL), string_agg(gold_text, ',') "
    "FROM ({rows}) AS items"
)


@dataclass(frozen=True)
class AnswerColumns:
    """A task's answers in (item, annotator) key order, one entry per answer.

    `values_json` is the answers' stored JSON texts joined with commas (SQL NULL as ``null``), i.e. the
    inside of one JSON array: decoded with one parser call, and digested as the database gave it.
    """

    item_ids: np.ndarray
    annotator_ids: np.ndarray
    batch_ids: np.ndarray  # 0 for an answer outside any batch
    flagged: np.ndarray
    skipped: np.ndarray
    values_json: str

    def __len__(self) -> int:
        return len(self.item_ids)


@dataclass(frozen=True)
class ItemColumns:
    """A task's items in id order (id, external id) and those that have gold, with the gold JSON texts joined."""

    item_ids: np.ndarray
    external_ids: list[str]
    gold_item_ids: np.ndarray
    gold_json: str


def answer_rows(task: Task) -> QuerySet[Any]:
    """The answers as rows in key order; PostgreSQL merge-joins along the unique (item, annotator) index."""
    return (
        Annotation.objects.counted().filter(item__task_id=task.pk)  # docs/crowd.md, "Exclusion"
        .annotate(value_text=Cast("value", TextField()), batch_or_0=Coalesce("batch_id", 0))
        .order_by("item_id", "annotator_id")
        .values_list("item_id", "annotator_id", "value_text", "skipped", "flagged", "batch_or_0")
    )


def item_rows(task: Task) -> QuerySet[Any]:
    """The task's items in id order with their gold text (LEFT JOIN: SQL NULL when an item has no gold)."""
    return (
        Item.objects.filter(task_id=task.pk)
        .annotate(gold_text=Cast("gold__value", TextField()))
        .order_by("id")
        .values_list("id", "external_id", "gold_text")
    )


def fetch_answer_columns(task: Task, *, by_rows: bool = False) -> AnswerColumns:
    """The answers as columns: aggregated on PostgreSQL, from rows on SQLite (or when `by_rows`)."""
    if by_rows or connections[answer_rows(task).db].vendor != "postgresql":
        return answer_columns_by_rows(task)
    columns = answer_columns_aggregated(task)
    return columns if in_key_order(columns) else answer_columns_by_rows(task)


def fetch_item_columns(task: Task, *, by_rows: bool = False) -> ItemColumns:
    """The items and gold as columns: aggregated on PostgreSQL, from rows on SQLite (or when `by_rows`)."""
    if by_rows or connections[item_rows(task).db].vendor != "postgresql":
        return item_columns_by_rows(task)
    columns = item_columns_aggregated(task)
    ascending = all(bool(np.all(np.diff(ids) > 0)) for ids in (columns.item_ids, columns.gold_item_ids))
    return columns if ascending else item_columns_by_rows(task)


def answer_columns_aggregated(task: Task) -> AnswerColumns:
    """One row of five values for the whole task: count, three bytea id columns and the joined values."""
    count, items, annotators, states, values = fetch_aggregate(answer_rows(task), ANSWERS_AGGREGATE_SQL)
    if not count:
        return empty_answer_columns()
    packed, item_ids, annotator_ids = int8_column(states), int8_column(items), int8_column(annotators)
    if not len(item_ids) == len(annotator_ids) == len(packed) == count:
        raise ValueError("the aggregated answer columns differ in length")
    return AnswerColumns(item_ids=item_ids, annotator_ids=annotator_ids, batch_ids=packed >> 2,
                         flagged=(packed & 2).astype(bool), skipped=(packed & 1).astype(bool), values_json=values)


def item_columns_aggregated(task: Task) -> ItemColumns:
    """One row for the whole task: item ids (bytea), external ids (one JSON array), gold ids and gold texts."""
    ids, external_ids, gold_ids, gold = fetch_aggregate(item_rows(task), ITEMS_AGGREGATE_SQL)
    columns = ItemColumns(item_ids=int8_column(ids), external_ids=json.loads(external_ids) if external_ids else [],
                          gold_item_ids=int8_column(gold_ids), gold_json=gold or "")
    if len(columns.item_ids) != len(columns.external_ids):
        raise ValueError("the aggregated item columns differ in length")
    return columns


def answer_columns_by_rows(task: Task) -> AnswerColumns:
    """The portable read: one row per answer, turned into the same columns (one C-level pass per column)."""
    rows = fetch_all(answer_rows(task))
    if not rows:
        return empty_answer_columns()
    item_ids, annotator_ids, texts, skipped, flagged, batch_ids = (list(map(itemgetter(c), rows)) for c in range(6))
    return AnswerColumns(item_ids=np.array(item_ids, dtype=np.int64),
                         annotator_ids=np.array(annotator_ids, dtype=np.int64),
                         batch_ids=np.array(batch_ids, dtype=np.int64), flagged=np.array(flagged, dtype=bool),
                         skipped=np.array(skipped, dtype=bool), values_json=join_json_texts(texts))


def item_columns_by_rows(task: Task) -> ItemColumns:
    rows = fetch_all(item_rows(task))
    with_gold = [row for row in rows if row[2] is not None]
    return ItemColumns(item_ids=np.array([row[0] for row in rows], dtype=np.int64),
                       external_ids=[row[1] for row in rows],
                       gold_item_ids=np.array([row[0] for row in with_gold], dtype=np.int64),
                       gold_json=join_json_texts([row[2] for row in with_gold]))


def join_json_texts(texts: list[str | None]) -> str:
    """The texts joined with commas, SQL NULL as ``null``: what the aggregated query's string_agg returns."""
    try:
        return ",".join(texts)  # type: ignore[arg-type]
    except TypeError:  # SQL NULLs among the texts
        return ",".join("null" if text is None else text for text in texts)


def in_key_order(columns: AnswerColumns) -> bool:
    """Whether rows are in strictly increasing (item, annotator) order, as the unique index orders them."""
    item_steps, annotator_steps = np.diff(columns.item_ids), np.diff(columns.annotator_ids)
    return bool(np.all((item_steps > 0) | ((item_steps == 0) & (annotator_steps > 0))))


def int8_column(data: bytes | None) -> np.ndarray:
    """A bytea of int8send values (big-endian) as native int64s; SQL NULL (no rows) as an empty column."""
    return np.frombuffer(data or b"", dtype=">i8").astype(np.int64)


def empty_answer_columns() -> AnswerColumns:
    none = np.zeros(0, dtype=np.int64)
    return AnswerColumns(item_ids=none, annotator_ids=none, batch_ids=none, flagged=none.astype(bool),
                         skipped=none.astype(bool), values_json="")


def fetch_aggregate(rows: QuerySet[Any], template: str) -> tuple[Any, ...]:
    """Run `template` around the row query's SQL (PostgreSQL only) and return its one row, bytea in binary."""
    sql, params = rows.query.sql_with_params()
    return fetch_sql(rows.db, template.format(rows=sql), params)[0]


def fetch_all(queryset: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """Run a values_list queryset and return all its rows at once (on PostgreSQL binary and streamed)."""
    sql, params = queryset.query.sql_with_params()
    return fetch_sql(queryset.db, sql, params)


def fetch_sql(alias: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """All rows of one query; on PostgreSQL binary and streamed.

    Iterating a queryset fetches 100 rows per call (Django's GET_ITERATOR_CHUNK_SIZE): 3,000 round trips
    through Python for 300,000 rows. On PostgreSQL the rows come in binary format (the driver parses no
    ids from text, and a bytea arrives as it is rather than hex-encoded) and, with libpq 17 or later, in
    chunks as the server produces them. The columns read here need no conversion (ids, text, booleans, bytea).
    """
    db = connections[alias]
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
