"""The SQL of the assignment engine's hot path, one statement per step, on PostgreSQL and SQLite.

Why raw SQL here: every annotator request runs these, and building the equivalent ORM expressions (correlated
subqueries, annotations) cost more Python time than the database spent answering; on PostgreSQL they run as
prepared statements (rawsql.py), so they are not planned again on every request either.
The statements are plain SQL shared by both backends; only the row-lock clause differs (PostgreSQL's
``FOR NO KEY UPDATE``; SQLite takes its write lock with BEGIN IMMEDIATE instead). Parameters are named
(``%(batch_id)s``) and always go through the driver; every row is read into a named row type whose fields the
select list names (``rawsql.select``). Statements that come in variants are built once per variant by a cached
function. Table names come from the models. The rules these implement live in assignment.py.
"""
from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any, NamedTuple

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import signals
from django.utils.dateparse import parse_datetime

from annotation.core import rawsql
from annotation.core.models import Annotation, Annotator, Batch, BatchAssignee, BatchItem, Hold
from tasks_app.models import Item

ANNOTATION, ANNOTATOR, BATCH = Annotation._meta.db_table, Annotator._meta.db_table, Batch._meta.db_table
ASSIGNEE, BATCH_ITEM, HOLD = BatchAssignee._meta.db_table, BatchItem._meta.db_table, Hold._meta.db_table
ITEM_TABLE = Item._meta.db_table
HUMAN = Annotator.Agent.HUMAN
# The values the counting conditions compare with: non-skipped answers of human annotators (who are not
# excluded: an excluded annotator's answers no longer fill their slots, docs/crowd.md "Exclusion").
COUNTED = {"skipped": False, "human": HUMAN}
POSTGRESQL = connection.vendor == "postgresql"


def _lock(alias: str, *, skip_locked: bool = False) -> str:
    """The row-lock clause: NO KEY UPDATE does not block the key-share locks taken by foreign-key checks."""
    if not POSTGRESQL:
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


ITEM = rawsql.columns(Item, "i")
ITEM_WIDTH = rawsql.width(Item)

# The annotator's own answer to the item of `bi` (in any batch: one answer per item and annotator).
_MINE = f"EXISTS (SELECT 1 FROM {ANNOTATION} m WHERE m.item_id = bi.item_id AND m.annotator_id = %(annotator_id)s)"
# Everyone's live holds on the batch item `bi` (the candidate's count; the annotator holds none there).
_LIVE_HOLDS = f"(SELECT COUNT(*) FROM {HOLD} o WHERE o.batch_item_id = bi.id AND o.expires_at > %(now)s)"
# Non-skipped answers of included (not excluded) human annotators to the item `item_id` in the batch `batch_id`:
# the engine's raw-SQL form of the one exclusion rule, annotation/models.py COUNTED (`Annotation.objects.counted()`).
_COUNTED_ANSWERS = (f"SELECT COUNT(*) FROM {ANNOTATION} a JOIN {ANNOTATOR} t ON t.id = a.annotator_id "
                    "WHERE a.item_id = %(item_id)s AND a.batch_id = %(batch_id)s AND a.skipped = %(skipped)s "
                    "AND t.agent = %(human)s AND t.excluded_at IS NULL")
# Others' live holds on the batch item `batch_item_id`.
_OTHERS_LIVE_HOLDS = (f"SELECT COUNT(*) FROM {HOLD} l WHERE l.batch_item_id = %(batch_item_id)s "
                       "AND l.expires_at > %(now)s AND l.annotator_id <> %(annotator_id)s")


# --- the seat: an annotator's place on a batch -------------------------------------------------------------

class SeatRow(NamedTuple):
    """The batch state and the annotator's, read while locking their BatchAssignee row, with the hold they
    already hold in the batch (None, None when they hold none)."""

    is_open: bool
    hands_out: bool
    overlap: int
    hold_seconds: int
    active: bool
    agent: str
    current_hold_id: int | None
    held_item_id: int | None


def _held(column: str) -> str:
    """A column of the annotator's live hold in the batch (the first in batch order)."""
    return (f"(SELECT {column} FROM {HOLD} l JOIN {BATCH_ITEM} hb ON hb.id = l.batch_item_id "
            "WHERE l.annotator_id = %(annotator_id)s AND hb.batch_id = %(batch_id)s AND l.expires_at > %(now)s "
            "ORDER BY hb.position LIMIT 1)")


SEAT_SQL = (f"SELECT {rawsql.select(SeatRow, is_open='b.is_open', hands_out='b.hands_out', overlap='b.overlap', hold_seconds='b.hold_seconds', active='a.active', agent='a.agent', current_hold_id=_held('l.id'), held_item_id=_held('hb.item_id'))} "  # noqa: E501
            f"FROM {ASSIGNEE} ba JOIN {BATCH} b ON b.id = ba.batch_id JOIN {ANNOTATOR} a ON a.id = ba.annotator_id "
            f"WHERE ba.batch_id = %(batch_id)s AND ba.annotator_id = %(annotator_id)s {_lock('ba')}")


def seat(*, batch_id: int, annotator_id: int, now: datetime) -> SeatRow | None:
    """Lock the annotator's BatchAssignee row and read the batch state with the hold they already hold, or
    None if they are not assigned."""
    row = rawsql.row(SEAT_SQL, {"batch_id": batch_id, "annotator_id": annotator_id, "now": _at(now)}, SeatRow)
    return None if row is None else row._replace(is_open=bool(row.is_open), hands_out=bool(row.hands_out),
                                                active=bool(row.active))


# --- next item -------------------------------------------------------------------------------------------------

class Candidate(NamedTuple):
    item: Item
    batch_item_id: int
    cached_answers: int  # BatchItem.human_answers as the candidate query read it


class _CandidateTail(NamedTuple):
    """The columns after the item's in the candidate row."""

    batch_item_id: int
    cached_answers: int


MAX_PROBED_OVERLAP = 50  # beyond this many index probes the plain scan is as good

# A condition starting the candidate scan at the batch's first item with room (PostgreSQL).
#
# Every item before it is full, so the condition changes no answer; without it the scan along (batch,
# position) walked past every full item at the head of the batch on every request, a cost that grew with
# the batch's progress. The first position with room is the least of k index probes, one per answer count
# below k, on (batch, human_answers, position). SQLite (the embedded default) keeps the plain scan.
# No item with room: NULL, and `position >= NULL` keeps no row, as `human_answers < k` would not either.
_FIRST_POSITION_WITH_ROOM = (
    f"AND bi.position >= (SELECT MIN((SELECT MIN(r.position) FROM {BATCH_ITEM} r WHERE r.batch_id = %(batch_id)s "
    "AND r.human_answers = h.n)) FROM generate_series(0, %(overlap)s - 1) AS h(n))")


@cache
def _candidate_sql(*, probe_first_room: bool, tried: int) -> str:
    """The candidate statement, starting at the first item with room or not, leaving out `tried` batch items
    (candidates found filled under their lock, named %(tried_0)s, ...)."""
    start = _FIRST_POSITION_WITH_ROOM if probe_first_room else ""
    excluded = f"AND bi.id NOT IN ({', '.join(f'%(tried_{n})s' for n in range(tried))})" if tried else ""
    tail = rawsql.select(_CandidateTail, batch_item_id="bi.id", cached_answers="bi.human_answers")
    return (f"SELECT {ITEM}, {tail} FROM {BATCH_ITEM} bi JOIN {ITEM_TABLE} i ON i.id = bi.item_id "
            f"WHERE bi.batch_id = %(batch_id)s {start} AND bi.human_answers < %(overlap)s {excluded} "
            f"AND NOT {_MINE} AND bi.human_answers + {_LIVE_HOLDS} < %(overlap)s "
            f"ORDER BY bi.position LIMIT 1 {_lock('bi', skip_locked=True)}")


def candidate(*, batch_id: int, annotator_id: int, overlap: int, now: datetime,
              tried: list[int]) -> Candidate | None:
    """The one locking query of next_item: the first item in batch order this annotator has not answered,
    with human answers (the cached count) + live holds below k, skipping rows other requests hold locked."""
    sql = _candidate_sql(probe_first_room=POSTGRESQL and overlap <= MAX_PROBED_OVERLAP, tried=len(tried))
    params = {"batch_id": batch_id, "annotator_id": annotator_id, "overlap": overlap, "now": _at(now),
              **{f"tried_{n}": batch_item_id for n, batch_item_id in enumerate(tried)}}
    row = rawsql.one(sql, params)
    if row is None:
        return None
    tail = _CandidateTail._make(row[ITEM_WIDTH:])
    return Candidate(rawsql.instance(Item, row[:ITEM_WIDTH]), tail.batch_item_id, tail.cached_answers)


FIRST_UNANSWERED_SQL = (f"SELECT {ITEM} FROM {BATCH_ITEM} bi JOIN {ITEM_TABLE} i ON i.id = bi.item_id "
                        f"WHERE bi.batch_id = %(batch_id)s AND NOT {_MINE} ORDER BY bi.position LIMIT 1")


def first_unanswered(*, batch_id: int, annotator_id: int) -> Item | None:
    """For LLM annotators, who are not bound by k."""
    row = rawsql.one(FIRST_UNANSWERED_SQL, {"batch_id": batch_id, "annotator_id": annotator_id})
    return None if row is None else rawsql.instance(Item, row)


CLAIM_SQL = (f"INSERT INTO {HOLD} (batch_item_id, annotator_id, held_at, expires_at) "
             "SELECT %(batch_item_id)s, %(annotator_id)s, %(now)s, %(expires_at)s "
             f"WHERE ({_COUNTED_ANSWERS}) + ({_OTHERS_LIVE_HOLDS}) < %(overlap)s "
             "ON CONFLICT (batch_item_id, annotator_id) DO UPDATE "
             "SET held_at = excluded.held_at, expires_at = excluded.expires_at RETURNING id")


def claim(candidate: Candidate, *, batch_id: int, annotator_id: int, overlap: int, now: datetime,
          expires_at: datetime) -> bool:
    """Write (or renew) the hold only if, counted afresh, the item still has room. A new statement under
    READ COMMITTED sees every hold committed before our row lock was granted, which the candidate
    query's older snapshot may have missed. True when the hold was written."""
    params = {"batch_item_id": candidate.batch_item_id, "item_id": candidate.item.pk, "batch_id": batch_id,
              "annotator_id": annotator_id, "overlap": overlap, "now": _at(now), "expires_at": _at(expires_at),
              **COUNTED}
    return rawsql.one(CLAIM_SQL, params) is not None


# --- submit ----------------------------------------------------------------------------------------------------

class LockedItem(NamedTuple):
    """The item's row in the batch, locked, with the batch and annotator state read in the same query."""

    batch_item_id: int
    overlap: int
    hold_seconds: int
    agent: str
    assigned: bool
    active: bool
    is_open: bool


LOCK_ITEM_SQL = (
    f"SELECT {rawsql.select(LockedItem, batch_item_id='bi.id', overlap='b.overlap', hold_seconds='b.hold_seconds', agent='a.agent', assigned=f'EXISTS (SELECT 1 FROM {ASSIGNEE} ba WHERE ba.batch_id = bi.batch_id AND ba.annotator_id = a.id)', active='a.active', is_open='b.is_open')} "  # noqa: E501
    f"FROM {BATCH_ITEM} bi JOIN {BATCH} b ON b.id = bi.batch_id CROSS JOIN {ANNOTATOR} a "
    f"WHERE bi.batch_id = %(batch_id)s AND bi.item_id = %(item_id)s AND a.id = %(annotator_id)s {_lock('bi')}")


def lock_item(*, batch_id: int, item_id: int, annotator_id: int) -> LockedItem | None:
    """Lock the item's row in the batch (waiting if another request holds it) and read the batch and annotator
    state, or None when the item is not in the batch."""
    row = rawsql.row(LOCK_ITEM_SQL, {"batch_id": batch_id, "item_id": item_id, "annotator_id": annotator_id},
                     LockedItem)
    if row is None:
        return None
    return row._replace(assigned=bool(row.assigned), active=bool(row.active), is_open=bool(row.is_open))


class State(NamedTuple):
    """An item's holders as seen by one annotator, read under the item's lock in a fresh statement."""

    annotation_id: int | None  # the annotator's own answer to the item, in any batch
    hold_from: datetime | None  # their hold on it in this batch (live or expired)
    hold_until: datetime | None
    answers: int  # non-skipped human answers of the others in this batch
    holds: int  # live holds of the others


def _own_hold(column: str) -> str:
    return (f"(SELECT {column} FROM {HOLD} l WHERE l.batch_item_id = %(batch_item_id)s "
            "AND l.annotator_id = %(annotator_id)s)")


STATE_SQL = "SELECT " + rawsql.select(
    State,
    annotation_id=(f"(SELECT a.id FROM {ANNOTATION} a WHERE a.item_id = %(item_id)s "
                   "AND a.annotator_id = %(annotator_id)s)"),
    hold_from=_own_hold("l.held_at"),
    hold_until=_own_hold("l.expires_at"),
    answers=f"({_COUNTED_ANSWERS} AND a.annotator_id <> %(annotator_id)s)",
    holds=f"({_OTHERS_LIVE_HOLDS})",
)


def state(*, batch_item_id: int, item_id: int, batch_id: int, annotator_id: int, now: datetime) -> State:
    """After the item's lock: everything a submit decides on, in one statement."""
    params = {"batch_item_id": batch_item_id, "item_id": item_id, "batch_id": batch_id,
              "annotator_id": annotator_id, "now": _at(now), **COUNTED}
    row = rawsql.row(STATE_SQL, params, State)
    return row._replace(hold_from=_datetime(row.hold_from), hold_until=_datetime(row.hold_until))


_ANSWER_FIELDS = [f for f in Annotation._meta.concrete_fields if not f.primary_key]
_ANSWER_COLUMNS = ", ".join(connection.ops.quote_name(f.column) for f in _ANSWER_FIELDS)
# The new answer's values are named after their columns; the hold to drop is that of its annotator_id.
_INSERT_ANSWER = (f"INSERT INTO {ANNOTATION} ({_ANSWER_COLUMNS}) "
                  f"VALUES ({', '.join(f'%({f.column})s' for f in _ANSWER_FIELDS)}) RETURNING id")
_DROP_HOLD = f"DELETE FROM {HOLD} WHERE batch_item_id = %(batch_item_id)s AND annotator_id = %(annotator_id)s"
_COUNT_ANSWER = f"UPDATE {BATCH_ITEM} SET human_answers = human_answers + %(delta)s WHERE id = %(batch_item_id)s"


@cache
def _answer_steps(*, drop_hold: bool, count: bool) -> tuple[str, ...]:
    """The statements storing a first answer: on PostgreSQL one (the insert, with the hold drop and the count
    as data-modifying CTEs: one round trip instead of three), on SQLite one per step."""
    after = (_DROP_HOLD,) * drop_hold + (_COUNT_ANSWER,) * count
    if not POSTGRESQL:
        return (_INSERT_ANSWER, *after)
    ctes = "".join(f", step{n} AS ({step})" for n, step in enumerate(after))
    return (f"WITH new AS ({_INSERT_ANSWER}){ctes} SELECT id FROM new",)


def insert_answer(annotation: Annotation, batch_item_id: int, *, drop_hold: bool, delta: int) -> None:
    """Store a first answer, drop the annotator's hold and move the item's cached count by `delta`. The row is
    written as save() writes it (the fields' own preparation, auto_now stamps, pre/post_save signals); the
    ORM's INSERT alone cost ~0.5 ms to build."""
    db = connections[DEFAULT_DB_ALIAS]
    signals.pre_save.send(sender=Annotation, instance=annotation, raw=False, using=db.alias, update_fields=None)
    params = {f.column: f.get_db_prep_save(f.pre_save(annotation, True), db) for f in _ANSWER_FIELDS}
    params.update(batch_item_id=batch_item_id, delta=delta)
    insert, *after = _answer_steps(drop_hold=drop_hold, count=bool(delta))
    annotation.pk = rawsql.one(insert, params)[0]
    for step in after:
        rawsql.one(step, params)
    annotation._state.adding, annotation._state.db = False, db.alias
    signals.post_save.send(sender=Annotation, instance=annotation, created=True, update_fields=None, raw=False,
                           using=db.alias)


# --- progress ----------------------------------------------------------------------------------------------------

# The annotator's answers that can be on the batch's items: those in batches of the batch's task (items belong
# to one task, and a batch holds its task's items) and those in no batch (imported), driven by the task's few
# batches, each a range of the Annotation (batch, annotator) index. Read from the annotator's side, the generic
# plan scanned every answer they ever gave, in every study (~1 µs each: 9 ms per request at 9,000 answers).
_ANSWERS_THAT_CAN_MEET = (
    f"SELECT a.item_id, a.batch_id, a.skipped FROM {BATCH} tb JOIN {BATCH} sb ON sb.task_id = tb.task_id "
    f"JOIN {ANNOTATION} a ON a.batch_id = sb.id AND a.annotator_id = %(annotator_id)s WHERE tb.id = %(batch_id)s "
    f"UNION ALL SELECT a.item_id, a.batch_id, a.skipped FROM {ANNOTATION} a "
    "WHERE a.batch_id IS NULL AND a.annotator_id = %(annotator_id)s")


class ProgressRow(NamedTuple):
    done: int  # the annotator's non-skipped answers in the batch
    skipped: int
    room: int  # the batch's items with fewer than k human answers
    answered: int  # of those, the ones the annotator answered (in any batch of the task, or none)
    blocked: int  # of those not answered, the ones others' live holds fill
    held_full: int  # of those, the ones only the annotator's own hold keeps
    held: int  # the annotator's live holds on items they have not answered


# live: the live holds (a short range of the expires_at index) kept when their item, probed by primary key, is
# in this batch. As a join, the generic plan hashed every item of the batch on each request.
PROGRESS_SQL = (
    f"WITH live AS (SELECT l.batch_item_id, l.annotator_id FROM {HOLD} l WHERE l.expires_at > %(now)s "
    f"AND (SELECT lb.batch_id FROM {BATCH_ITEM} lb WHERE lb.id = l.batch_item_id) = %(batch_id)s), "
    "touched AS (SELECT bi.human_answers AS h, "
    "SUM(CASE WHEN live.annotator_id = %(annotator_id)s THEN 1 ELSE 0 END) AS own, "
    "SUM(CASE WHEN live.annotator_id = %(annotator_id)s THEN 0 ELSE 1 END) AS others, "
    f"{_MINE} AS answered "
    f"FROM live JOIN {BATCH_ITEM} bi ON bi.id = live.batch_item_id GROUP BY bi.id, bi.human_answers, bi.item_id) "
    "SELECT " + rawsql.select(
        ProgressRow, done="mine.done", skipped="mine.skipped",
        room=f"(SELECT COUNT(*) FROM {BATCH_ITEM} bi WHERE bi.batch_id = %(batch_id)s "
             "AND bi.human_answers < %(overlap)s)",
        answered="mine.answered", blocked="holds.blocked", held_full="holds.held_full", held="holds.held",
    ) + " "
    "FROM (SELECT COUNT(CASE WHEN a.batch_id = %(batch_id)s AND NOT a.skipped THEN 1 END) AS done, "
    "COUNT(CASE WHEN a.batch_id = %(batch_id)s AND a.skipped THEN 1 END) AS skipped, "
    f"COUNT(CASE WHEN (SELECT bi.human_answers FROM {BATCH_ITEM} bi WHERE bi.batch_id = %(batch_id)s "
    f"AND bi.item_id = a.item_id) < %(overlap)s THEN 1 END) AS answered FROM ({_ANSWERS_THAT_CAN_MEET}) a) mine, "
    "(SELECT COUNT(CASE WHEN others > 0 AND h < %(overlap)s AND h + others >= %(overlap)s THEN 1 END) AS blocked, "
    "COUNT(CASE WHEN own > 0 AND h + others >= %(overlap)s THEN 1 END) AS held_full, "
    "COUNT(CASE WHEN own > 0 THEN 1 END) AS held FROM touched WHERE NOT answered) holds")


def progress(*, batch_id: int, annotator_id: int, overlap: int, now: datetime) -> dict[str, int]:
    """An annotator's figures in one statement that never walks the batch item by item with subqueries:
    items with room (an index-only count on the cached human_answers), minus those they answered (one pass
    over their answers in the task's batches with an index probe each, which also counts done and skipped),
    minus those others' live holds fill, plus those only their own hold keeps (the batch's live holds: a
    range of the expires_at index). Pass a huge `overlap` for LLM annotators (not bound by k)."""
    row = rawsql.row(PROGRESS_SQL, {"now": _at(now), "batch_id": batch_id, "annotator_id": annotator_id,
                                    "overlap": overlap}, ProgressRow)
    available = row.room - row.answered - row.blocked + row.held_full
    return {"done": row.done, "skipped": row.skipped, "total": row.done + row.skipped + available,
            "held": row.held, "available": available}
