"""Load everything a report needs: the task's answers and gold as columns, and the digests that key the report.

A report over 100,000 items × 3 annotators reads 300,000 answers, so this module never builds model
instances, never issues a query per item or per answer, and never maps ids to names row by row in Python:

- two bulk queries (``agreement/core/loading_queries.py``), one over the task's items and their gold, one over
  its answers in (item, annotator) key order; on PostgreSQL each hands over whole columns as single values,
  and the two run at once on two connections sharing one snapshot (``read_in_parallel``);
- the few annotator and batch rows are read once each by id;
- item external ids are looked up once per answered item (each item's answers are one run of rows), and
  the JSON values are decoded with ONE ``json.loads`` call for the whole column.

The digests are over content, never over database ids, so the same answers imported into a copy of the
task digest the same: items by external id, annotators by name, batches by name and language, values as
the database's JSON texts.
Measured on 100,000 items × 3 annotators: bench/bench_report.py, figures in docs/reports.md.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from agreement.core.loading_queries import AnswerColumns, ItemColumns, fetch_answer_columns, fetch_item_columns
from annotation.models import Annotator, Batch
from tasks_app.models import Task

# Bump when the report document's shape or the way it is computed changes: stored reports become stale.
# 2: digests over aggregated columns (run lengths, name ranks, joined JSON texts, skip states).
# 3: Cohen's κ per pair, metric subsets, chart data.
# 4: human.n_items_scored counts the sets or queries of clustering and reranking (it counted the
#    annotators), who are counted in human.n_annotators_scored.
# 5: a reranking or graded-relevance query with no relevant gold candidate scores 0 and is averaged in (it
#    was excluded), as pytrec_eval and MTEB count it; human.n_excluded_queries became n_queries_without_relevant.
# 6: Gwet's AC1/AC2 with agreement_intervals, the aggregation (part of inputs_digest) and annotator_models.
# 7: each of excluded_annotators carries n_answers (their answers on the task left out).
REPORT_FORMAT_VERSION = 8
A = TypeVar("A")
B = TypeVar("B")


@dataclass(frozen=True)
class LoadedAnswers:
    """A task's answers as columns (row i of every per-row column is one annotation), its gold, and the digests.

    Rows are in (item, annotator) order, so each answered item's answers are one run of rows: `items[i]`
    is the external id of the i-th answered item and its rows start at `item_starts[i]`. `annotators`,
    `values`, `flagged` and `batch_ids` have one entry per row; skipped answers have value None;
    `batch_ids[row]` is 0 for an answer outside any batch (its language is the task's).
    """

    items: list[str]
    item_starts: list[int]
    annotators: list[str]
    values: list[Any]
    flagged: np.ndarray
    batch_ids: np.ndarray
    annotator_agents: dict[str, str]
    batches: dict[int, tuple[str, str]]
    gold: dict[str, Any]
    answers_digest: str
    inputs_digest: str
    aggregation: str = "majority"  # how the report combines the humans (measures/annotator_models.py)

    def __len__(self) -> int:
        return len(self.values)

    def run_lengths(self) -> list[int]:
        """How many answers each answered item has (the length of its run of rows)."""
        return np.diff(np.array([*self.item_starts, len(self)], dtype=np.int64)).tolist()

    def item_of_rows(self, rows: np.ndarray) -> np.ndarray:
        """Index into `items` of each given row number."""
        return np.searchsorted(np.array(self.item_starts, dtype=np.int64), rows, side="right") - 1


def task_settings(task: Task) -> dict[str, Any]:
    """The task fields scoring depends on; a change to any of them makes a stored report stale."""
    lo, hi, step = task.scale
    return {"kind": task.kind, "language": task.language, "labels": list(task.labels or []), "scale": [lo, hi, step],
            "axes": list(task.axes or []), "mteb_task_name": task.mteb_task_name, "mteb_subset": task.mteb_subset,
            "kappa_min_shared": settings.KAPPA_MIN_SHARED_ITEMS,
            "annotator_models_max_answers": settings.ANNOTATOR_MODELS_MAX_ANSWERS}


def load_answers(task: Task, *, by_rows: bool = False, aggregation: str = "majority") -> LoadedAnswers:
    """Read the task's items with their gold and its answers in two bulk queries (plus annotator/batch rows).

    On PostgreSQL, outside a transaction, the two queries run at once on two connections that share one
    snapshot (see read_in_parallel); otherwise one after the other. `by_rows` reads rows instead of
    aggregated columns (what SQLite always does), for tests that compare the two. `aggregation` (how the
    report will combine the humans) is part of `inputs_digest`, so a report is stored and found per aggregation.
    """
    items, answers = read_in_parallel(lambda: read_items_and_gold(task, by_rows=by_rows),
                                      lambda: fetch_answer_columns(task, by_rows=by_rows))
    return assemble(task, items, answers, aggregation)


@dataclass(frozen=True)
class ItemsAndGold:
    """The items query's columns, with its gold decoded (by external id) and digested."""

    columns: ItemColumns
    gold: dict[str, Any]
    gold_digest: str


def read_items_and_gold(task: Task, *, by_rows: bool = False) -> ItemsAndGold:
    """The items query, then its gold decoded: in the side thread, while the answers query still runs."""
    columns = fetch_item_columns(task, by_rows=by_rows)
    return ItemsAndGold(columns, *decode_gold(columns))


def assemble(task: Task, read: ItemsAndGold, answers: AnswerColumns, aggregation: str = "majority") -> LoadedAnswers:
    """Map ids to external ids and names, decode values, and digest, all column by column."""
    items, gold, gold_digest = read.columns, read.gold, read.gold_digest
    starts = run_starts(answers.item_ids)
    run_items = external_ids_of(items, answers.item_ids[starts])
    people = dict_by_id(Annotator.objects.filter(pk__in=distinct_ids(answers.annotator_ids)), "user__username", "agent")
    batches = dict_by_id(Batch.objects.filter(pk__in=distinct_ids(answers.batch_ids)), "name", "language")
    names, name_of_row = index_column(answers.annotator_ids, {pk: name for pk, (name, _) in people.items()})
    values = decode_json_array(answers.values_json, len(answers))
    for row in np.flatnonzero(answers.skipped).tolist():
        values[row] = None  # a skipped answer's value is not read (None), whatever the row holds
    digest = answers_digest(run_items, np.diff(np.append(starts, len(answers))), names, name_of_row,
                            answers.values_json, answers.skipped)
    placed = placement_digest(answers.flagged, answers.batch_ids, batches)
    return LoadedAnswers(
        items=run_items, item_starts=starts.tolist(),
        annotators=np.array(names, dtype=object)[name_of_row].tolist(), values=values,
        flagged=answers.flagged, batch_ids=answers.batch_ids,
        annotator_agents=dict(people.values()), batches=batches, gold=gold,
        answers_digest=digest, inputs_digest=inputs_digest(task, digest, gold_digest, placed, aggregation),
        aggregation=aggregation)


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


def run_starts(item_ids: np.ndarray) -> np.ndarray:
    """Row numbers where a new item's run of answers starts (rows are in item order)."""
    if not len(item_ids):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.diff(item_ids, prepend=item_ids[:1] - 1))


def distinct_ids(ids: np.ndarray) -> list[int]:
    """The distinct database ids in a column: counted per id when they are small (annotators and batches
    number in the thousands at most), which is several times faster than np.unique on 300,000 rows."""
    if len(ids) and ids.min() >= 0 and ids.max() < 1 << 20:
        return np.flatnonzero(np.bincount(ids)).tolist()
    return np.unique(ids).tolist()


def external_ids_of(items: ItemColumns, item_ids: np.ndarray) -> list[str]:
    """The external ids of the given item ids, looked up in the items query's sorted id column."""
    if np.array_equal(item_ids, items.item_ids):  # the usual case: every item answered, or every item has gold
        return list(items.external_ids)
    positions = np.searchsorted(items.item_ids, item_ids)
    if len(item_ids) and (positions.max() >= len(items.item_ids) or (items.item_ids[positions] != item_ids).any()):
        raise LookupError("an answer refers to an item the items query did not return")
    return list(map(items.external_ids.__getitem__, positions.tolist()))


def index_column(ids: np.ndarray, name_by_id: dict[int, str]) -> tuple[list[str], np.ndarray]:
    """The names in `name_by_id`, sorted, and each row's index into that sorted list.

    Rows thus refer to annotators (or batches) by name, not by database id, which differs between copies.
    """
    unique = np.array(sorted(name_by_id), dtype=np.int64)
    positions = np.searchsorted(unique, ids)
    if len(ids) and (positions.max() >= len(unique) or (unique[positions] != ids).any()):
        raise LookupError(f"an answer refers to an id not read: {sorted(set(ids.tolist()) - set(name_by_id))}")
    names = [name_by_id[pk] for pk in unique.tolist()]
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    return [names[i] for i in order], rank[positions]


def decode_gold(items: ItemColumns) -> tuple[dict[str, Any], str]:
    """Gold by external id (a JSON null gold is no gold), and the digest of the gold rows as stored."""
    keys = external_ids_of(items, items.gold_item_ids)
    gold = dict(zip(keys, decode_json_array(items.gold_json, len(keys)), strict=True))
    if None in gold.values():
        gold = {key: value for key, value in gold.items() if value is not None}
    return gold, digest_of(b"gold", text_column(keys), items.gold_json.encode("utf-8"))


def decode_json_array(joined: str, count: int) -> list[Any]:
    """Decode `count` JSON texts joined with commas with one parser call."""
    values = json.loads(f"[{joined}]")
    if len(values) != count:  # a text holding several values would shift every later row
        raise ValueError("a stored JSON value did not decode to exactly one value")
    return values


def dict_by_id(queryset: Any, *fields: str) -> dict[int, tuple[Any, ...]]:
    return {pk: tuple(rest) for pk, *rest in queryset.values_list("pk", *fields)}


def answers_digest(items: list[str], run_lengths: np.ndarray, names: list[str], name_of_row: np.ndarray,
                   values_json: str, skipped: np.ndarray) -> str:
    """sha256 over the answers by content: each answered item's external id and run length, each row's
    annotator (rank among the sorted names), the values as the database stores them, and the skips.

    Rows are in (item, annotator) order, so the same answers give the same digest, also when imported
    into a copy of the task.
    """
    return digest_of(b"answers", text_column(items), np.asarray(run_lengths, dtype="<i8").tobytes(),
                     text_column(names), name_of_row.astype("<i4").tobytes(), values_json.encode("utf-8"),
                     skipped.astype(np.uint8).tobytes())


def placement_digest(flagged: np.ndarray, batch_ids: np.ndarray, batches: dict[int, tuple[str, str]]) -> str:
    """sha256 over each answer's flag and batch (the report counts flags and scores each batch and language).

    Batches by name and language (their rank among the batches read; "outside any batch" ranks first),
    not by database id.
    """
    named = {pk: json.dumps([name, language], ensure_ascii=False) for pk, (name, language) in batches.items()}
    keys, batch_of_row = index_column(batch_ids, {0: "", **named})
    return digest_of(b"placements", flagged.astype(np.uint8).tobytes(), text_column(keys),
                     batch_of_row.astype("<i4").tobytes())


def text_column(column: Sequence[str]) -> bytes:
    """Texts as bytes, joined with NUL (PostgreSQL text never holds one): a C loop, five times faster than
    JSON-encoding 100,000 texts; a column whose texts hold NULs (possible on SQLite) is JSON-encoded."""
    text = "\x00".join(column)
    if text.count("\x00") != max(len(column) - 1, 0):
        return b"\x02" + json.dumps(list(column), ensure_ascii=False).encode("utf-8")
    return b"\x01" + text.encode("utf-8")


def digest_of(*parts: bytes) -> str:
    """sha256 of the parts, each preceded by its length, so no two different sequences of parts collide."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def inputs_digest(task: Task, answers: str, gold: str, placements: str, aggregation: str = "majority") -> str:
    """sha256 over the answers, gold and placement digests, the task settings, the aggregation and the report
    format version."""
    payload = json.dumps([REPORT_FORMAT_VERSION, answers, gold, placements, task_settings(task), aggregation],
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
