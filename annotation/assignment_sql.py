"""The SQL of the assignment engine's hot path, one statement per step, on PostgreSQL and SQLite.

Why raw SQL here: every annotator request runs these, and building the equivalent ORM expressions (correlated
subqueries, annotations) cost more Python time than the database spent answering; on PostgreSQL they run as
prepared statements (rawsql.py), so they are not planned again on every request either.
The statements are plain SQL shared by both backends; only the row-lock clause differs (PostgreSQL's
``FOR NO KEY UPDATE``; SQLite takes its write lock with BEGIN IMMEDIATE instead). Parameters always go
through the driver; table names come from the models. The rules these implement live in assignment.py.
"""
from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import signals
from django.utils.dateparse import parse_datetime

from annotation import rawsql
from annotation.models import Annotation, Annotator, Batch, BatchAssignee, BatchItem, Lease
from tasks_app.models import Item

T = {"annotation": Annotation._meta.db_table, "annotator": Annotator._meta.db_table, "batch": Batch._meta.db_table,
     "assignee": BatchAssignee._meta.db_table, "batch_item": BatchItem._meta.db_table, "lease": Lease._meta.db_table,
     "item": Item._meta.db_table}
HUMAN = Annotator.Kind.HUMAN


def _lock(alias: str, *, skip_locked: bool = False) -> str:
    """The row-lock clause: NO KEY UPDATE does not block the key-share locks taken by foreign-key checks."""
    if connection.vendor != "postgresql":
        return ""
    return f"FOR NO KEY UPDATE OF {alias}" + (" SKIP LOCKED" if skip_locked else "")


def _at(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)


def _datetime(value: Any) -> datetime | None:
    """PostgreSQL hands back an aware datetime; SQLite naive UTC (or text) for computed columns."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else parse_datetime(str(value))
    return parsed.replace(tzinfo=UTC) if parsed is not None and parsed.tzinfo is None else parsed


def _one(sql: str, params: list[Any]) -> tuple | None:
    return rawsql.one(_tables(sql), params)


@lru_cache(maxsize=64)
def _tables(sql: str) -> str:
    """The statement with the models' table names filled in (the same few statements, every request)."""
    return sql.format(**T)


def _item(row: tuple | None) -> Item | None:
    """An Item from a row starting with its columns (ITEM); extra trailing columns are returned alongside."""
    return None if row is None else rawsql.instance(Item, row[:ITEM_WIDTH])


ITEM = rawsql.columns(Item, "i")
ITEM_WIDTH = rawsql.width(Item)


# Others' live leases on the batch item `bi`.
_OTHERS_LEASES = ("(SELECT COUNT(*) FROM {lease} o WHERE o.batch_item_id = bi.id AND o.expires_at > %s "
                  "AND o.annotator_id <> %s)")
# The annotator's own answer to the item of `bi` (in any batch: one answer per item and annotator).
_MINE = "EXISTS (SELECT 1 FROM {annotation} m WHERE m.item_id = bi.item_id AND m.annotator_id = %s)"


def seat(batch_id: int, annotator_id: int, now: datetime) -> tuple | None:
    """Lock the annotator's BatchAssignee row and read the batch state with the lease they already hold:
    (is_open, overlap, lease_seconds, active, kind, held lease id, held item id), or None if not assigned."""
    held = ("SELECT {col} FROM {lease} l JOIN {batch_item} hb ON hb.id = l.batch_item_id WHERE l.annotator_id = %s "
            "AND hb.batch_id = %s AND l.expires_at > %s ORDER BY hb.position LIMIT 1")
    sql = (f"SELECT b.is_open, b.overlap, b.lease_seconds, a.active, a.kind, ({held.format(col='l.id', **T)}), "
           f"({held.format(col='hb.item_id', **T)}) "
           "FROM {assignee} ba JOIN {batch} b ON b.id = ba.batch_id JOIN {annotator} a ON a.id = ba.annotator_id "
           f"WHERE ba.batch_id = %s AND ba.annotator_id = %s {_lock('ba')}")
    now_at = _at(now)
    row = _one(sql, [annotator_id, batch_id, now_at, annotator_id, batch_id, now_at, batch_id, annotator_id])
    return None if row is None else (bool(row[0]), row[1], row[2], bool(row[3]), *row[4:])


def candidate(batch_id: int, annotator_id: int, overlap: int, now: datetime, tried: list[int]) -> Item | None:
    """The one locking query of next_item: the first item in batch order this annotator has not answered,
    with human answers (the cached count) + live leases below k, skipping rows other requests hold locked.
    Returns the Item with `batch_item_id` and `cached_answers` attached."""
    excluded = f"AND bi.id NOT IN ({', '.join(['%s'] * len(tried))})" if tried else ""
    leases = _OTHERS_LEASES.replace(" AND o.annotator_id <> %s", "")
    start, start_params = _first_position_with_room(batch_id, overlap)
    sql = (f"SELECT {ITEM}, bi.id, bi.human_answers "
           "FROM {batch_item} bi JOIN {item} i ON i.id = bi.item_id "
           f"WHERE bi.batch_id = %s {start} AND bi.human_answers < %s {excluded} AND NOT {_MINE} "
           f"AND bi.human_answers + {leases} < %s ORDER BY bi.position LIMIT 1 {_lock('bi', skip_locked=True)}")
    row = _one(sql, [batch_id, *start_params, overlap, *tried, annotator_id, _at(now), overlap])
    item = _item(row)
    if item is not None:
        item.batch_item_id, item.cached_answers = row[ITEM_WIDTH:]
    return item


MAX_PROBED_OVERLAP = 50  # beyond this many index probes the plain scan is as good


def _first_position_with_room(batch_id: int, overlap: int) -> tuple[str, list[Any]]:
    """A condition starting the candidate scan at the batch's first item with room (PostgreSQL).

    Every item before it is full, so the condition changes no answer; without it the scan along (batch,
    position) walked past every full item at the head of the batch on every request, a cost that grew with
    the batch's progress. The first position with room is the least of k index probes, one per answer count
    below k, on (batch, human_answers, position). SQLite (the embedded default) keeps the plain scan.
    """
    if connection.vendor != "postgresql" or overlap > MAX_PROBED_OVERLAP:
        return "", []
    # No item with room: NULL, and `position >= NULL` keeps no row, as `human_answers < k` would not either.
    return ("AND bi.position >= (SELECT MIN((SELECT MIN(r.position) FROM {batch_item} r "
            "WHERE r.batch_id = %s AND r.human_answers = h.n)) FROM generate_series(0, %s - 1) AS h(n))",
            [batch_id, overlap])


def first_unanswered(batch_id: int, annotator_id: int) -> Item | None:
    """For LLM annotators, who are not bound by k."""
    sql = (f"SELECT {ITEM} FROM {{batch_item}} bi JOIN {{item}} i ON i.id = bi.item_id "
           f"WHERE bi.batch_id = %s AND NOT {_MINE} ORDER BY bi.position LIMIT 1")
    return _item(_one(sql, [batch_id, annotator_id]))


def claim(batch_item_id: int, item_id: int, batch_id: int, annotator_id: int, overlap: int, now: datetime,
          expires_at: datetime) -> bool:
    """Write (or renew) the lease only if, counted afresh, the item still has room. A new statement under
    READ COMMITTED sees every lease committed before our row lock was granted, which the candidate
    query's older snapshot may have missed. True when the lease was written."""
    sql = ("INSERT INTO {lease} (batch_item_id, annotator_id, leased_at, expires_at) SELECT %s, %s, %s, %s "
           "WHERE (SELECT COUNT(*) FROM {annotation} a JOIN {annotator} t ON t.id = a.annotator_id "
           "WHERE a.item_id = %s AND a.batch_id = %s AND a.skipped = %s AND t.kind = %s) "
           "+ (SELECT COUNT(*) FROM {lease} l WHERE l.batch_item_id = %s AND l.expires_at > %s "
           "AND l.annotator_id <> %s) < %s "
           "ON CONFLICT (batch_item_id, annotator_id) DO UPDATE "
           "SET leased_at = excluded.leased_at, expires_at = excluded.expires_at RETURNING id")
    at = _at(now)
    params = [batch_item_id, annotator_id, at, _at(expires_at), item_id, batch_id, False, HUMAN, batch_item_id, at,
              annotator_id, overlap]
    return _one(sql, params) is not None


def lock_item(batch_id: int, item_id: int, annotator_id: int) -> tuple | None:
    """Lock the item's row in the batch (waiting if another request holds it) and read the batch and annotator
    state: (batch item id, overlap, lease_seconds, kind, assigned, active, is_open), or None."""
    sql = ("SELECT bi.id, b.overlap, b.lease_seconds, a.kind, "
           "EXISTS (SELECT 1 FROM {assignee} ba WHERE ba.batch_id = bi.batch_id AND ba.annotator_id = a.id), "
           "a.active, b.is_open FROM {batch_item} bi JOIN {batch} b ON b.id = bi.batch_id "
           f"CROSS JOIN {{annotator}} a WHERE bi.batch_id = %s AND bi.item_id = %s AND a.id = %s {_lock('bi')}")
    row = _one(sql, [batch_id, item_id, annotator_id])
    return None if row is None else (*row[:4], bool(row[4]), bool(row[5]), bool(row[6]))


def state(batch_item_id: int, item_id: int, batch_id: int, annotator_id: int, now: datetime) -> tuple:
    """After the item's lock: (own answer id, own lease's leased_at, its expires_at, others' non-skipped human
    answers in the batch, others' live leases) — everything a submit decides on, in one statement."""
    own_lease = "SELECT {col} FROM {lease} l WHERE l.batch_item_id = %s AND l.annotator_id = %s"
    sql = ("SELECT (SELECT a.id FROM {annotation} a WHERE a.item_id = %s AND a.annotator_id = %s), "
           f"({own_lease.format(col='l.leased_at', **T)}), ({own_lease.format(col='l.expires_at', **T)}), "
           "(SELECT COUNT(*) FROM {annotation} a JOIN {annotator} t ON t.id = a.annotator_id WHERE a.item_id = %s "
           "AND a.batch_id = %s AND a.skipped = %s AND t.kind = %s AND a.annotator_id <> %s), "
           "(SELECT COUNT(*) FROM {lease} l WHERE l.batch_item_id = %s AND l.expires_at > %s "
           "AND l.annotator_id <> %s)")
    params = [item_id, annotator_id, batch_item_id, annotator_id, batch_item_id, annotator_id, item_id, batch_id,
              False, HUMAN, annotator_id, batch_item_id, _at(now), annotator_id]
    row = _one(sql, params)
    return row[0], _datetime(row[1]), _datetime(row[2]), row[3], row[4]


def insert_answer(annotation: Annotation, batch_item_id: int, *, drop_lease: bool, delta: int) -> None:
    """Store a first answer, drop the annotator's lease and move the item's cached count: one round trip on
    PostgreSQL (data-modifying CTEs) instead of three. The row is written as save() writes it (the fields' own
    preparation, auto_now stamps, pre/post_save signals); the ORM's INSERT alone cost ~0.5 ms to build."""
    db = connections[DEFAULT_DB_ALIAS]
    signals.pre_save.send(sender=Annotation, instance=annotation, raw=False, using=db.alias, update_fields=None)
    values = [f.get_db_prep_save(f.pre_save(annotation, True), db) for f in _ANSWER_FIELDS]
    insert = f"INSERT INTO {{annotation}} ({_ANSWER_COLUMNS}) VALUES ({', '.join(['%s'] * len(values))}) RETURNING id"
    drop = "DELETE FROM {lease} WHERE batch_item_id = %s AND annotator_id = %s"
    bump = "UPDATE {batch_item} SET human_answers = human_answers + %s WHERE id = %s"
    steps = [(drop, [batch_item_id, annotation.annotator_id])] if drop_lease else []
    steps += [(bump, [delta, batch_item_id])] if delta else []
    if db.vendor == "postgresql":
        ctes = "".join(f", step{n} AS ({sql})" for n, (sql, _) in enumerate(steps))
        row = _one(f"WITH new AS ({insert}){ctes} SELECT id FROM new", [*values, *(p for _, ps in steps for p in ps)])
        annotation.pk = row[0]
    else:
        annotation.pk = _one(insert, values)[0]
        for sql, params in steps:
            _one(sql, params)
    annotation._state.adding, annotation._state.db = False, db.alias
    signals.post_save.send(sender=Annotation, instance=annotation, created=True, update_fields=None, raw=False,
                           using=db.alias)


_ANSWER_FIELDS = [f for f in Annotation._meta.concrete_fields if not f.primary_key]
_ANSWER_COLUMNS = ", ".join(connection.ops.quote_name(f.column) for f in _ANSWER_FIELDS)


# The annotator's answers that can be on the batch's items: those in batches of the batch's task (items belong
# to one task, and a batch holds its task's items) and those in no batch (imported), driven by the task's few
# batches, each a range of the Annotation (batch, annotator) index. Read from the annotator's side, the generic
# plan scanned every answer they ever gave, in every study (~1 µs each: 9 ms per request at 9,000 answers).
_ANSWERS_THAT_CAN_MEET = (
    "SELECT a.item_id, a.batch_id, a.skipped FROM {batch} tb JOIN {batch} sb ON sb.task_id = tb.task_id "
    "JOIN {annotation} a ON a.batch_id = sb.id AND a.annotator_id = %s WHERE tb.id = %s "
    "UNION ALL SELECT a.item_id, a.batch_id, a.skipped FROM {annotation} a "
    "WHERE a.batch_id IS NULL AND a.annotator_id = %s")


def progress(batch_id: int, annotator_id: int, overlap: int, now: datetime) -> dict[str, int]:
    """An annotator's figures in one statement that never walks the batch item by item with subqueries:
    items with room (an index-only count on the cached human_answers), minus those they answered (one pass
    over their answers in the task's batches with an index probe each, which also counts done and skipped),
    minus those others' live leases fill, plus those only their own lease keeps (the batch's live leases: a
    range of the expires_at index). Pass a huge `overlap` for LLM annotators (not bound by k)."""
    # live: the live leases (a short range of the expires_at index) kept when their item, probed by primary
    # key, is in this batch. As a join, the generic plan hashed every item of the batch on each request.
    sql = ("WITH live AS (SELECT l.batch_item_id, l.annotator_id FROM {lease} l WHERE l.expires_at > %s "
           "AND (SELECT lb.batch_id FROM {batch_item} lb WHERE lb.id = l.batch_item_id) = %s), "
           "touched AS (SELECT bi.human_answers AS h, "
           "SUM(CASE WHEN live.annotator_id = %s THEN 1 ELSE 0 END) AS held, "
           "SUM(CASE WHEN live.annotator_id = %s THEN 0 ELSE 1 END) AS others, "
           f"{_MINE} AS answered "
           "FROM live JOIN {batch_item} bi ON bi.id = live.batch_item_id GROUP BY bi.id, bi.human_answers, bi.item_id) "
           "SELECT mine.done, mine.skipped, "
           "(SELECT COUNT(*) FROM {batch_item} bi WHERE bi.batch_id = %s AND bi.human_answers < %s), "
           "mine.answered, leases.blocked, leases.held_full, leases.leased "
           "FROM (SELECT COUNT(CASE WHEN a.batch_id = %s AND NOT a.skipped THEN 1 END) AS done, "
           "COUNT(CASE WHEN a.batch_id = %s AND a.skipped THEN 1 END) AS skipped, "
           "COUNT(CASE WHEN (SELECT bi.human_answers FROM {batch_item} bi WHERE bi.batch_id = %s "
           f"AND bi.item_id = a.item_id) < %s THEN 1 END) AS answered FROM ({_ANSWERS_THAT_CAN_MEET}) a) mine, "
           "(SELECT COUNT(CASE WHEN others > 0 AND h < %s AND h + others >= %s THEN 1 END) AS blocked, "
           "COUNT(CASE WHEN held > 0 AND h + others >= %s THEN 1 END) AS held_full, "
           "COUNT(CASE WHEN held > 0 THEN 1 END) AS leased FROM touched WHERE NOT answered) leases")
    me, k = annotator_id, overlap
    params = [_at(now), batch_id, me, me, me, batch_id, k, batch_id, batch_id, batch_id, k, me, batch_id, me, k, k,
              k]
    done, skipped, room, answered, blocked, held_full, leased = _one(sql, params)
    available = room - answered - blocked + held_full
    return {"done": done, "skipped": skipped, "total": done + skipped + available, "leased": leased,
            "available": available}
