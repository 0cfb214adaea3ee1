"""Running a task's agreement report: the code a Celery worker and the `report` CLI share.

A report run is: claim the task's Report row (hume/jobs/lease.py: one conditional UPDATE decides who runs),
load the answers in one query (``agreement/core/loading.py``), stop early if the digests match the stored report,
build the document (``agreement/core/report_building.py``) and store it while the claim is still ours.

Asking for a run lives in ``agreement/core/report_queue.py``; its public names are re-exported here, so
``from agreement.core.reports import request_report`` keeps working for the pages, the API and the tests.
"""
from __future__ import annotations

from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from agreement.core import loading
from agreement.core.loading import LoadedAnswers
from agreement.core.models import Report
from agreement.core.report_building import build_report, gc_paused, main_agreement
from agreement.core.report_queue import (
    JOB,
    ReportQueueError,
    enqueue,
    request_first_report,
    request_report,
    requeue_dead,
    requeue_if_dead,
)
from agreement.core.scoring import check_aggregation
from hume.jobs import control
from hume.jobs.lease import Lease
from hume.jobs.lease import claim as claim_job
from tasks_app.models import Task

__all__ = ["JOB", "ReportQueueError", "build_report", "claim", "enqueue", "finish",
           "fresh_result", "fresh_result_exists", "main_agreement", "report_in_process", "request_first_report",
           "request_report", "requeue_dead", "requeue_if_dead", "run_claimed", "run_report"]

Status = Report.Status


def claim(task_id: int, claimed_by: str, *, any_state: bool = False) -> Lease | None:
    """Take the report row for one run (hume/jobs/lease.py: one conditional UPDATE decides who runs).

    A worker may claim a queued report, one whose running claim has expired, or one still held by the
    same Celery message (a redelivery after its worker died: acks_late). The CLI (any_state) may also
    claim a done or failed report, but never one another runner holds.
    """
    if any_state:  # the CLI recomputes a finished report: a new request, its attempts afresh
        control.submit(Report.objects.filter(task_id=task_id, status__in=[Status.DONE, Status.FAILED]))
    may = None
    if claimed_by and claimed_by != "cli":  # a Celery message id: its redelivery may resume its own claim
        may = Q(status=Status.RUNNING, claimed_by=claimed_by)
    return claim_job(Report.objects.filter(task_id=task_id), claimed_by=claimed_by, may=may,
                     stage="loading answers", progress=5, error="")


def run_report(task_id: int, *, claimed_by: str, computed_in: str, aggregation: str | None = None) -> str:
    """Claim and run one report with the row's parameters (`aggregation`, when given, is a message of an older
    version that carried it); returns what happened ("computed", "unchanged", "not claimed: ...")."""
    lease = claim(task_id, claimed_by)
    if lease is None:
        status = Report.objects.filter(task_id=task_id).values_list("status", flat=True).first()
        return f"not claimed: report is {status or 'missing'}"
    return run_claimed(task_id, lease, computed_in=computed_in, aggregation=aggregation)


def run_claimed(task_id: int, lease: Lease, *, computed_in: str, loaded: LoadedAnswers | None = None,
                aggregation: str | None = None) -> str:
    """Compute and store a report whose claim we hold (its lease renewed meanwhile), with the row's aggregation
    unless one is given; a failure is stored on the row, then re-raised."""
    def progress(stage: str, percent: int) -> None:
        lease.write(stage=stage, progress=percent)

    try:
        with lease.kept():
            task = Task.objects.get(pk=task_id)
            if aggregation is None:
                aggregation = Report.objects.filter(task_id=task_id).values_list("aggregation", flat=True).get()
            if loaded is None:
                with gc_paused():
                    loaded = loading.load_answers(task, aggregation=aggregation)
            progress("answers read", 25)  # an answer committed from now on is left to the next run
            if fresh_result_exists(task_id, loaded):
                return finish(task_id, lease, None, loaded, computed_in)
            with gc_paused():
                doc = build_report(task, loaded, progress)
            progress("storing", 90)
            return finish(task_id, lease, doc, loaded, computed_in)
    except Exception as exc:
        lease.fail(f"{type(exc).__name__}: {exc}", stage="")
        raise


def finish(task_id: int, lease: Lease, doc: dict[str, Any] | None, loaded: LoadedAnswers, computed_in: str) -> str:
    """Store the result if the claim is still ours; go back to queued if answers changed meanwhile."""
    now = timezone.now()
    fields: dict[str, Any] = {
        "stage": "", "progress": 100, "finished_at": now,
        "aggregation": loaded.aggregation,  # what the stored result was computed with (the CLI may ask another)
    }
    if doc is not None:
        doc = {**doc, "computed_at": now.isoformat(), "computed_in": computed_in}
        fields |= {"result": doc, "answers_digest": loaded.answers_digest, "inputs_digest": loaded.inputs_digest,
                   "computed_at": now, "computed_in": computed_in, "computations": F("computations") + 1}
    if not lease.finish(again_if=Q(requested_at__gt=F("started_at")), **fields):
        return "discarded: the claim was taken over"
    if Report.objects.filter(task_id=task_id, status=Status.QUEUED).exists():
        try:
            enqueue(task_id)  # answers changed while we ran: the next run starts now
        except ReportQueueError:
            pass  # the report stays queued, its message in the outbox for the beat; the result we stored stands
    return "computed" if doc is not None else "unchanged"


# ---------------------------------------------------------------- reading


def fresh_result_exists(task_id: int, loaded: LoadedAnswers) -> bool:
    return Report.objects.filter(task_id=task_id, inputs_digest=loaded.inputs_digest, result__isnull=False).exists()


def fresh_result(task: Task, loaded: LoadedAnswers) -> dict[str, Any] | None:
    """The stored document if it was computed from exactly these inputs, else None."""
    row = Report.objects.filter(task=task, inputs_digest=loaded.inputs_digest, result__isnull=False).first()
    return row.result if row else None


def report_in_process(task: Task, aggregation: str = "majority") -> tuple[dict[str, Any], str]:
    """For the CLI: the stored report when fresh, else compute it here with the worker's code.

    Returns (document, how): "stored", "computed" (and stored), or "computed, not stored" when a worker
    holds the claim right now. `aggregation` is checked before anything is read or claimed (an unknown name
    or a kind without labels raises UnknownAggregation) and is part of the digest the stored report is found by.
    """
    check_aggregation(task.kind, aggregation)
    loaded = loading.load_answers(task, aggregation=aggregation)
    stored = fresh_result(task, loaded)
    if stored is not None:
        return stored, "stored"
    Report.objects.get_or_create(task=task)
    lease = claim(task.pk, "cli", any_state=True)
    if lease is None:
        return build_report(task, loaded), "computed, not stored (a worker is computing it now)"
    run_claimed(task.pk, lease, computed_in="cli", loaded=loaded)
    return Report.objects.get(task=task).result, "computed"
