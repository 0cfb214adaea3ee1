"""Build, claim, run and store agreement reports: the code a Celery worker and the `report` CLI share.

A report run is: claim the task's Report row with a conditional UPDATE (only one runner wins), load the
answers in one query (``agreement/loading.py``), stop early if the digests match the stored report, score
with ``agreement/scoring.score_task`` (the whole task, then each batch and each language), and store the
document while the claim is still ours. Metric arithmetic lives in ``measures/metrics.py`` and
``agreement/scoring.py`` only; this module shapes data and keeps state.

Queueing never falls back to computing inline: when the broker is unreachable, ``request_report`` marks the
report failed with the reason and raises ``ReportQueueError``, so pages and the API can say so.
"""
from __future__ import annotations

import gc
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice, repeat
from operator import itemgetter
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from agreement import loading
from agreement.loading import LoadedAnswers
from agreement.models import Report
from agreement.scoring import KINDS as SCORERS
from agreement.scoring import check_aggregation, score_task
from annotation.models import Annotator
from hume import jobs
from hume.jobs import recovery
from hume.jobs.lease import Lease, lapsed
from hume.jobs.lease import claim as claim_job
from hume.jobs.registry import JobType
from tasks_app.models import Task

log = logging.getLogger(__name__)

Status = Report.Status
# Items kept in a stored report's item-level view: the most disagreed ones by each of the two orders.
DISAGREEMENT_KEEP = 1000
EXCLUDED_KEEP = 1000  # the first exclusions are listed; all are counted in n_excluded and excluded_reasons
Progress = Callable[[str, int], None]


class ReportQueueError(RuntimeError):
    """The report could not be queued (the broker is unreachable); the Report row says so too."""


# ---------------------------------------------------------------- building the document


def build_report(task: Task, loaded: LoadedAnswers, progress: Progress | None = None) -> dict[str, Any]:
    """The report document of a task from what was loaded: the whole task, then per batch and language."""
    step = progress or (lambda stage, percent: None)
    step("scoring the task", 30)
    whole = score_rows(task, loaded)
    doc: dict[str, Any] = {
        "format_version": loading.REPORT_FORMAT_VERSION,
        "task": task.name,
        "task_id": task.pk,
        "language": task.language,
        "mteb_task_name": task.mteb_task_name,
        "mteb_subset": task.mteb_subset,
        **whole,
        "disagreement": keep_most_disagreed(whole["disagreement"]),
        "excluded": whole["excluded"][:EXCLUDED_KEEP],
        "excluded_reasons": dict(Counter(entry["reason"] for entry in whole["excluded"])),
        "n_rows_read": len(loaded),
        "excluded_annotators": excluded_annotators(task),
        "answers_digest": loaded.answers_digest,
        "inputs_digest": loaded.inputs_digest,
    }
    step("scoring batches and languages", 70)
    batches = loaded.batches
    batch_keys, batch_rows = distinct_and_inverse(loaded.batch_ids)
    doc["by_batch"] = [{"batch_id": pk, "batch": batches[pk][0], "language": batches[pk][1], **part}
                       for pk, part in score_groups(task, loaded, whole, batch_keys, batch_rows) if pk]
    language_of = [task.language if not pk else batches[pk][1] for pk in batch_keys]
    languages = sorted(set(language_of))
    if len(languages) <= 1:  # one language: the whole task's numbers
        doc["by_language"] = [{"language": code, **summary(whole)} for code in languages]
    else:
        language_rows = np.array([languages.index(code) for code in language_of])[batch_rows]
        doc["by_language"] = [{"language": code, **part}
                              for code, part in score_groups(task, loaded, whole, languages, language_rows)]
    return doc


def excluded_annotators(task: Task) -> list[dict[str, Any]]:
    """The annotators with answers on this task whom an admin excluded (their answers were not read)."""
    rows = (Annotator.objects.filter(excluded_at__isnull=False, annotations__item__task_id=task.pk).distinct()
            .order_by("user__username").values_list("user__username", "excluded_reason", "excluded_at"))
    return [{"name": name, "reason": reason, "excluded_at": at.isoformat()} for name, reason, at in rows]


def distinct_and_inverse(column: np.ndarray) -> tuple[list[int], np.ndarray]:
    """np.unique(column, return_inverse=True), without its sort of every row when all rows hold one value
    (the usual report: one batch)."""
    if len(column) and bool((column == column[0]).all()):
        return [int(column[0])], np.zeros(len(column), dtype=np.intp)
    keys, inverse = np.unique(column, return_inverse=True)
    return keys.tolist(), inverse


def score_rows(task: Task, loaded: LoadedAnswers, rows: np.ndarray | None = None) -> dict[str, Any]:
    """Shape the rows (all, or the given row numbers) as score_task wants them; add the flag counts."""
    items, names, values = loaded.items, loaded.annotators, loaded.values
    if rows is None:
        # Each item's answers are one run of rows: dict() takes each run's (annotator, value) pairs from one
        # shared iterator, so the 100,000 dicts are built by C loops, not a Python loop (half the time).
        pairs = zip(names, values, strict=True)
        answers = dict(zip(items, map(dict, map(islice, repeat(pairs), loaded.run_lengths())), strict=True))
        flags = np.flatnonzero(loaded.flagged)
    else:
        grouped: dict[str, dict[str, Any]] = defaultdict(dict)
        for row, item in zip(rows.tolist(), loaded.item_of_rows(rows).tolist(), strict=True):
            grouped[items[item]][names[row]] = values[row]
        answers = dict(grouped)
        flags = rows[loaded.flagged[rows]]
    gold = loaded.gold
    if not gold.keys() <= answers.keys():  # items nobody answered are progress, not part of the report
        gold = {key: gold[key] for key in answers if key in gold}
    lo, hi, _ = task.scale
    result = score_task(task.kind, answers, gold, labels=task.labels or None, scale=(lo, hi) if hi > lo else None,
                        axes=task.axes or None, annotator_kinds=loaded.annotator_kinds,
                        kappa_min_shared=settings.KAPPA_MIN_SHARED_ITEMS, with_charts=rows is None,
                        aggregation=loaded.aggregation,
                        annotator_models_max_answers=settings.ANNOTATOR_MODELS_MAX_ANSWERS if rows is None else 0)
    per_annotator = Counter(names[row] for row in flags.tolist())
    for annotator in result["annotators"]:
        annotator["n_flagged"] = per_annotator.get(annotator["name"], 0)
    result["n_flagged"] = len(flags)
    result["n_flagged_items"] = len(set(loaded.item_of_rows(flags).tolist()))
    result["agreement_main"] = main_agreement(task, result["agreement"])
    return result


def main_agreement(task: Task, agreement: dict[str, Any]) -> str | None:
    """The agreement value a task is judged by (HUME: κ for labels, ARI, Spearman's ρ, α per likert axis):
    its scorer's `main_agreement`, else the first agreement value there is."""
    name: str | None = SCORERS[task.kind].main_agreement
    if name and "{axis}" in name:
        name = name.format(axis=task.axes[0]) if task.axes else None
    return name if name in agreement else next(iter(agreement), None)


def score_groups(
    task: Task, loaded: LoadedAnswers, whole: dict[str, Any], keys: list[Any], group_of_row: np.ndarray
) -> Iterable[tuple[Any, dict[str, Any]]]:
    """Score each group of rows (`group_of_row[i]`: row i's index into `keys`); one group reuses the whole task's."""
    if len(keys) == 1:  # the usual case (one batch, one language): the whole task's numbers
        yield keys[0], summary(whole)
        return
    order = np.argsort(group_of_row, kind="stable")
    bounds = np.searchsorted(group_of_row[order], np.arange(len(keys) + 1))
    for index in sorted(range(len(keys)), key=lambda i: str(keys[i])):
        rows = order[bounds[index]:bounds[index + 1]]
        if len(rows):
            yield keys[index], summary(score_rows(task, loaded, rows))


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """A part's numbers without its item-level lists (those are for the whole task only)."""
    return {k: v for k, v in result.items() if k not in ("disagreement", "excluded", "charts")}


def keep_most_disagreed(rows: list[dict[str, Any]], keep: int = DISAGREEMENT_KEEP) -> list[dict[str, Any]]:
    """The items most disagreed on among annotators, plus those most off gold, in score_task's order."""
    if len(rows) <= keep:
        return rows
    off_gold = np.array(list(map(itemgetter("gold_disagreement"), rows)), dtype=float)  # None → NaN
    off_gold[np.isnan(off_gold)] = -1.0
    by_gold = np.argsort(-off_gold, kind="stable")[:keep]
    chosen = set(range(keep)) | set(by_gold.tolist())
    return [rows[i] for i in sorted(chosen)]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a run builds its hundreds of thousands of objects.

    They hold no reference cycles, yet every few hundred allocations the collector would traverse the
    growing heap again (about 20% of a large report's time); one collection after the run is enough.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------- asking for a run


def request_report(task_id: int, *, countdown: float = 0, aggregation: str | None = None) -> Report:
    """Mark the task's report queued (or due for a re-run if one is running) and send the job after commit.

    The job's parameters live on the row, not in the message: `aggregation` replaces the stored one, None
    keeps it, so a run sent again (a lapsed lease, new answers) computes what was asked. Raises
    ReportQueueError when the broker is down; inside an atomic block the message (and so the error) comes
    after the commit.
    """
    now = timezone.now()
    with transaction.atomic():
        report, _ = Report.objects.get_or_create(task_id=task_id, defaults={"requested_at": now})
        asked = {"requested_at": now} if aggregation is None else {"requested_at": now, "aggregation": aggregation}
        Report.objects.filter(pk=report.pk).update(**asked)
        Report.objects.filter(pk=report.pk).filter(~Q(status=Status.RUNNING) | Q(lease_expires_at__lt=now)).update(
            status=Status.QUEUED, stage="queued", progress=0, error="")
    transaction.on_commit(lambda: enqueue(task_id, countdown=countdown))
    report.refresh_from_db()
    return report


def requeue_if_dead(report: Report | None) -> Report | None:
    """Re-queue a report whose runner died (its lease lapsed); the status poll calls this on every look.

    Returns the report as it now stands. A broker error is left on the row by ``enqueue``."""
    if report is None or not Report.objects.filter(lapsed(), pk=report.pk).exists():
        return report
    log.warning("report of task %s: its run stopped renewing its lease (worker gone); queued again", report.task_id)
    try:
        return request_report(report.task_id)
    except ReportQueueError:
        return Report.objects.get(pk=report.pk)


def requeue_dead(task_id: int) -> None:
    """The job layer's re-queue of a report whose lease lapsed (hume/jobs/recovery.py)."""
    requeue_if_dead(Report.objects.filter(task_id=task_id).first())


# The report job type (registered in agreement/apps.py): its task takes the task id.
JOB = JobType(name="report", model="agreement.Report", task="agreement.compute_report", key="task_id",
              queued_since="requested_at", requeue=requeue_dead)


def dead_or_waiting_reports() -> list[tuple[int, float]]:
    """(task id, seconds until it may be claimed) of every report a worker should look at now: running ones,
    claimable once their lease lapses (a live runner keeps renewing it, and the look finds nothing to do), and
    ones queued for longer than a lease (a broker restarted without its data may have lost their message;
    a message sent just now is left to do its work)."""
    return recovery.waiting(JOB)  # type: ignore[return-value]


def request_first_report(task_id: int) -> bool:
    """Queue the task's first report, unless one was ever asked for (a page found none stored); True if queued.

    The Report row created here is the lock: of pages opened at once, one creates it and sends one job
    (after commit); the others find it and only show its state.
    """
    _, created = Report.objects.get_or_create(
        task_id=task_id, defaults={"requested_at": timezone.now(), "status": Status.QUEUED, "stage": "queued"})
    if created:
        transaction.on_commit(lambda: enqueue(task_id))
    return created


def enqueue(task_id: int, *, countdown: float = 0) -> None:
    """Send the Celery message (the task id: the parameters are on the row); on failure mark the queued report
    failed with the reason, and raise."""
    try:
        jobs.enqueue("agreement.compute_report", task_id, countdown=countdown, retry=True,
                     retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2})
    except Exception as exc:  # kombu raises OperationalError, redis-py its own errors: all mean "not queued"
        message = f"The report could not be queued: the task queue is unreachable ({type(exc).__name__}: {exc})."
        log.error("report of task %s: %s", task_id, message)
        Report.objects.filter(task_id=task_id, status=Status.QUEUED).update(
            status=Status.FAILED, stage="", error=message, finished_at=timezone.now())
        raise ReportQueueError(message) from exc


# ---------------------------------------------------------------- running a claimed report


def claim(task_id: int, claimed_by: str, *, any_state: bool = False) -> Lease | None:
    """Take the report row for one run (hume/jobs/lease.py: one conditional UPDATE decides who runs).

    A worker may claim a queued report, one whose running claim has expired, or one still held by the
    same Celery message (a redelivery after its worker died: acks_late). The CLI (any_state) may also
    claim a done or failed report, but never one another runner holds.
    """
    may = Q(status__in=[Status.DONE, Status.FAILED]) if any_state else None
    if claimed_by and claimed_by != "cli":  # a Celery message id: its redelivery may resume its own claim
        mine = Q(status=Status.RUNNING, claimed_by=claimed_by)
        may = mine if may is None else may | mine
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
        "status": Case(When(requested_at__gt=F("started_at"), then=Value(Status.QUEUED)), default=Value(Status.DONE)),
        "stage": "", "progress": 100, "finished_at": now, "claim_token": None, "lease_expires_at": None, "error": "",
        "aggregation": loaded.aggregation,  # what the stored result was computed with (the CLI may ask another)
    }
    if doc is not None:
        doc = {**doc, "computed_at": now.isoformat(), "computed_in": computed_in}
        fields |= {"result": doc, "answers_digest": loaded.answers_digest, "inputs_digest": loaded.inputs_digest,
                   "computed_at": now, "computed_in": computed_in, "computations": F("computations") + 1}
    if not lease.write(**fields):
        return "discarded: the claim was taken over"
    if Report.objects.filter(task_id=task_id, status=Status.QUEUED).exists():
        try:
            enqueue(task_id)  # answers changed while we ran: the next run starts now
        except ReportQueueError:
            pass  # enqueue marked the report failed with the reason; the result we stored stands
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
