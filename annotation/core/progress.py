"""Progress of batches for the admin dashboard and its CSV export: who is done, what is held, what is left.

Counts, not metrics: agreement lives in `agreement/`. Every figure is read from the Annotation and Hold rows
with a handful of grouped queries per batch (never one per item), so the dashboard can poll every 5 s.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q
from django.utils import timezone

from annotation.core.assignment import annotator_progress
from annotation.core.models import Annotation, Annotator, Batch, BatchAssignee, BatchItem, Hold
from hume.lib.csv_safety import to_csv

HUMAN = Annotator.Agent.HUMAN
ISSUES_SHOWN = 200


@dataclass
class AnnotatorRow:
    annotator_id: int
    name: str
    agent: str
    active: bool
    override_reason: str
    done: int = 0
    skipped: int = 0
    flagged: int = 0
    held: int = 0
    remaining: int = 0  # items this annotator can still get
    median_ms: float | None = None
    last_submit: datetime | None = None

    @property
    def status(self) -> str:
        """At a glance: finished, working, not started, or inactive."""
        if not self.active:
            return "inactive"
        if self.remaining == 0 and self.held == 0:
            return "done"
        return "working" if self.done or self.skipped or self.held else "not started"


@dataclass
class BatchProgress:
    batch: Batch
    items: int
    needed: int  # items × k answers by humans
    done: int  # non-skipped human answers
    held: int  # live holds
    complete_items: int
    median_ms: float | None
    annotators: list[AnnotatorRow] = field(default_factory=list)
    issues: list[Annotation] = field(default_factory=list)  # skips and flags, newest first

    @property
    def remaining(self) -> int:
        return max(0, self.needed - self.done - self.held)

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.needed) if self.needed else 100


def batch_progress(batch: Batch, *, now: datetime | None = None, issues: int | None = ISSUES_SHOWN) -> BatchProgress:
    """The dashboard of one batch: totals, one row per assignee, and the latest `issues` skips and flags
    (all of them with None, for the CSV export)."""
    now = now or timezone.now()
    answers = Annotation.objects.filter(batch=batch)
    items = BatchItem.objects.filter(batch=batch).count()
    # Toward k count only the answers that count (as the engine does): an exclusion reopens the items it emptied.
    per_item = list(answers.counted().filter(skipped=False, annotator__agent=HUMAN).order_by().values("item_id")
                    .annotate(n=Count("pk")).values_list("n", flat=True))
    rows = annotator_rows(batch, now)
    times = [t for t in answers.filter(skipped=False).values_list("time_spent_ms", flat=True) if t]
    progress = BatchProgress(
        batch=batch, items=items, needed=items * batch.overlap, done=sum(per_item),
        held=Hold.objects.filter(batch_item__batch=batch, expires_at__gt=now).count(),
        complete_items=sum(1 for n in per_item if n >= batch.overlap),
        median_ms=statistics.median(times) if times else None, annotators=rows,
    )
    flagged = answers.filter(Q(skipped=True) | Q(flagged=True)).select_related("item", "annotator__user")
    flagged = flagged.order_by("-submitted_at")
    progress.issues = list(flagged if issues is None else flagged[:issues])
    return progress


def annotator_rows(batch: Batch, now: datetime) -> list[AnnotatorRow]:
    assignees = list(BatchAssignee.objects.filter(batch=batch).select_related("annotator__user"))
    annotators = {a.annotator_id: a.annotator for a in assignees}
    rows = {a.annotator_id: AnnotatorRow(annotator_id=a.annotator_id, name=a.annotator.name, agent=a.annotator.agent,
                                         active=a.annotator.active, override_reason=a.override_reason)
            for a in assignees}
    counts = (Annotation.objects.filter(batch=batch).order_by().values("annotator_id")
              .annotate(done=Count("pk", filter=Q(skipped=False)), skipped=Count("pk", filter=Q(skipped=True)),
                        flagged=Count("pk", filter=Q(flagged=True))))
    for entry in counts:
        if row := rows.get(entry["annotator_id"]):
            row.done, row.skipped, row.flagged = entry["done"], entry["skipped"], entry["flagged"]
    times: dict[int, list[int]] = defaultdict(list)
    last: dict[int, datetime] = {}
    for annotator_id, spent, submitted in (Annotation.objects.filter(batch=batch, skipped=False)
                                           .values_list("annotator_id", "time_spent_ms", "submitted_at")):
        if spent:
            times[annotator_id].append(spent)
        last[annotator_id] = max(submitted, last.get(annotator_id, submitted))
    for annotator_id, row in rows.items():
        row.median_ms = statistics.median(times[annotator_id]) if times[annotator_id] else None
        row.last_submit = last.get(annotator_id)
        figures = annotator_progress(annotators[annotator_id], batch, now=now)
        row.held, row.remaining = figures["held"], figures["available"]
    return sorted(rows.values(), key=lambda r: r.name)


def overview(batches: Iterable[Batch], *, now: datetime | None = None) -> list[dict]:
    """One line per batch (done / held / remaining / percent) with three grouped queries in all."""
    now = now or timezone.now()
    batches = list(batches)
    ids = [b.pk for b in batches]
    items = dict(BatchItem.objects.filter(batch_id__in=ids).order_by().values("batch_id")
                 .annotate(n=Count("pk")).values_list("batch_id", "n"))
    done = dict(Annotation.objects.counted().filter(batch_id__in=ids, skipped=False, annotator__agent=HUMAN).order_by()
                .values("batch_id").annotate(n=Count("pk")).values_list("batch_id", "n"))
    held_by_batch = dict(Hold.objects.filter(batch_item__batch_id__in=ids, expires_at__gt=now).order_by()
                         .values("batch_item__batch_id").annotate(n=Count("pk"))
                         .values_list("batch_item__batch_id", "n"))
    lines = []
    for batch in batches:
        needed = items.get(batch.pk, 0) * batch.overlap
        d, held = done.get(batch.pk, 0), held_by_batch.get(batch.pk, 0)
        lines.append({"batch": batch, "items": items.get(batch.pk, 0), "needed": needed, "done": d, "held": held,
                      "remaining": max(0, needed - d - held), "percent": round(100 * d / needed) if needed else 100})
    return lines


# --- CSV ------------------------------------------------------------------------------------------------------

ANNOTATOR_HEADER = ("batch_id", "batch", "language", "k", "annotator", "agent", "status", "done", "skipped", "flagged",
                    "held", "remaining", "median_seconds", "last_submit", "override_reason")
ISSUE_HEADER = ("batch_id", "item_external_id", "annotator", "skipped", "skip_reason", "flagged", "flag_comment",
                "submitted_at")


def _in_header_order(header: tuple[str, ...], cells: dict[str, object]) -> tuple[object, ...]:
    """A CSV row from cells named by their column, so a header and its rows cannot drift apart."""
    if set(cells) != set(header):
        raise ValueError(f"CSV cells {sorted(cells)} do not match the header {sorted(header)}")
    return tuple(cells[name] for name in header)


def progress_csv(progress: BatchProgress) -> str:
    """One row per annotator of the batch."""
    b = progress.batch
    rows = [_in_header_order(ANNOTATOR_HEADER, {
        "batch_id": b.pk, "batch": b.name, "language": b.language, "k": b.overlap, "annotator": r.name,
        "agent": r.agent, "status": r.status, "done": r.done, "skipped": r.skipped, "flagged": r.flagged,
        "held": r.held, "remaining": r.remaining,
        "median_seconds": None if r.median_ms is None else round(r.median_ms / 1000, 1),
        "last_submit": r.last_submit, "override_reason": r.override_reason,
    }) for r in progress.annotators]
    return to_csv(ANNOTATOR_HEADER, rows)


def issues_csv(progress: BatchProgress) -> str:
    """Every skip and flag of the batch with the annotator's reason or comment."""
    b = progress.batch
    issues = [_in_header_order(ISSUE_HEADER, {
        "batch_id": b.pk, "item_external_id": a.item.external_id, "annotator": a.annotator.name,
        "skipped": a.skipped, "skip_reason": a.skip_reason, "flagged": a.flagged, "flag_comment": a.flag_comment,
        "submitted_at": a.submitted_at,
    }) for a in progress.issues]
    return to_csv(ISSUE_HEADER, issues)
