"""Load everything a report needs in two bulk queries: the task's answers, and its gold.

A report over 100,000 items × 3 annotators must read 300,000 answers in well under a second, so this
module never builds model instances and never issues a query per item: one ``values_list`` over
annotations joined with their item's external id, the annotator's name and kind and the batch, and one
over ItemGold. JSON values are fetched as their text and decoded in one ``json.loads`` call for the
whole column, because decoding them one by one (what the database driver does for a JSON column)
costs more than the query itself. The digests say whether a stored report is still fresh.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from django.db.models import TextField
from django.db.models.functions import Cast

from annotation.models import Annotation
from tasks_app.models import ItemGold, Task

# Bump when the report document's shape or the way it is computed changes: stored reports become stale.
REPORT_FORMAT_VERSION = 1
STREAM_CHUNK = 20_000


class AnswerRow(NamedTuple):
    """One annotation as the report reads it (skipped answers have value None)."""

    item: str
    annotator: str
    annotator_kind: str
    value: Any
    skipped: bool
    flagged: bool
    batch_id: int | None
    batch: str
    language: str


@dataclass(frozen=True)
class LoadedAnswers:
    """What one report run read, with the digests that decide whether a stored report is fresh."""

    rows: list[AnswerRow]
    gold: dict[str, Any]
    answers_digest: str
    inputs_digest: str


def task_settings(task: Task) -> dict[str, Any]:
    """The task fields scoring depends on; a change to any of them makes a stored report stale."""
    lo, hi, step = task.scale
    return {"kind": task.kind, "language": task.language, "labels": list(task.labels or []), "scale": [lo, hi, step],
            "axes": list(task.axes or []), "mteb_task_name": task.mteb_task_name, "mteb_subset": task.mteb_subset}


def load_answers(task: Task) -> LoadedAnswers:
    """Read the task's answers and gold (two queries) and digest them."""
    rows = fetch_answer_rows(task)
    gold = fetch_gold(task)
    digest = answers_digest(rows)
    return LoadedAnswers(rows=rows, gold=gold, answers_digest=digest, inputs_digest=inputs_digest(task, digest, gold))


def fetch_answer_rows(task: Task) -> list[AnswerRow]:
    """One query over the task's annotations, in (item, annotator) primary-key order.

    Sorting by the integer keys of the unique (item, annotator) pair gives the digest a deterministic
    order without comparing strings; the integer columns are dropped afterwards.
    """
    queryset = (
        Annotation.objects.filter(item__task_id=task.pk)
        .annotate(value_text=Cast("value", TextField()))
        .order_by()
        .values_list("item_id", "annotator_id", "item__external_id", "annotator__user__username", "annotator__kind",
                     "value_text", "skipped", "flagged", "batch_id", "batch__name", "batch__language")
    )
    raw = list(queryset.iterator(chunk_size=STREAM_CHUNK))
    raw.sort(key=itemgetter(0, 1))
    values = decode_json_column([r[5] for r in raw])
    language = task.language
    return [
        AnswerRow(r[2], r[3], r[4], None if r[6] else v, r[6], r[7], r[8], r[9] or "", r[10] or language)
        for r, v in zip(raw, values, strict=True)
    ]


def fetch_gold(task: Task) -> dict[str, Any]:
    """One query over the task's gold values, keyed by item external id."""
    pairs = list(
        ItemGold.objects.filter(item__task_id=task.pk)
        .annotate(value_text=Cast("value", TextField()))
        .order_by()
        .values_list("item__external_id", "value_text")
    )
    values = decode_json_column([text for _, text in pairs])
    return {key: value for (key, _), value in zip(pairs, values, strict=True) if value is not None}


def decode_json_column(texts: Sequence[str | None]) -> list[Any]:
    """Decode a column of JSON texts with one parser call (SQL NULL → None)."""
    if not texts:
        return []
    joined = ",".join("null" if t is None else t for t in texts)
    values = json.loads(f"[{joined}]")
    if len(values) != len(texts):  # a text holding several values would shift every later row
        raise ValueError("a stored JSON value did not decode to exactly one value")
    return values


def answers_digest(rows: Iterable[AnswerRow]) -> str:
    """sha256 over the (item, annotator, value, skipped) rows in their deterministic order."""
    payload = json.dumps([(r.item, r.annotator, r.value, r.skipped) for r in rows],
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def inputs_digest(task: Task, answers: str, gold: dict[str, Any]) -> str:
    """sha256 over the answers digest, the gold, the task settings and the report format version."""
    payload = json.dumps([REPORT_FORMAT_VERSION, answers, sorted(gold.items()), task_settings(task)],
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def test_delay_seconds() -> float:
    """HUME_REPORT_TEST_DELAY: seconds a report run sleeps once claimed, so tests can kill it mid-run."""
    try:
        return max(0.0, float(os.environ.get("HUME_REPORT_TEST_DELAY", "0") or 0))
    except ValueError:
        return 0.0
