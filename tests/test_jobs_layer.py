"""The job layer (hume/jobs/): one claim between racing workers, claim_next hands each row to one worker,
a lease renews itself while work runs, a worker that lost its lease writes nothing (fencing), a job that
used up its attempts fails with the reason, and the lease fields are declared once, by the abstract job.

Racing workers are real PostgreSQL clients: threads with their own connections (transactional tests)."""
from __future__ import annotations

import inspect
import re
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from agreement.models import Report
from hume.jobs.lease import Lease, LeaseLost, claim, claim_batch, claim_next, exhausted_message
from hume.jobs.models import LEASE_FIELDS, Job
from hume.jobs.registry import TYPES
from tests.report_builders import build_task

pytestmark = pytest.mark.django_db(transaction=True)


def reports(n: int) -> list[Report]:
    return [Report.objects.create(task=build_task("classification", f"job-{i}", [{"text": "t", "label": "a"}],
                                                  labels=["a", "b"])) for i in range(n)]


def in_threads(n: int, work) -> list:  # type: ignore[no-untyped-def]
    """Run ``work`` in n threads at once (each its own database connection); their results."""
    results: list = [None] * n
    start = threading.Barrier(n)

    def one(i: int) -> None:
        try:
            start.wait()
            results[i] = work()
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_the_database_is_postgresql() -> None:
    assert connection.vendor == "postgresql"  # the races below are only meaningful there


def test_of_eight_workers_claiming_one_job_at_once_exactly_one_wins() -> None:
    [report] = reports(1)
    won = in_threads(8, lambda: claim(Report.objects.filter(pk=report.pk), claimed_by="w"))
    leases = [lease for lease in won if lease is not None]
    assert len(leases) == 1
    row = Report.objects.get(pk=report.pk)
    assert (row.status, row.attempts, row.claim_token) == ("running", 1, leases[0].token)
    assert row.holder and row.lease_expires_at > timezone.now()


def test_claim_next_hands_each_of_30_rows_to_exactly_one_of_6_racing_workers() -> None:
    ids = {report.pk for report in reports(30)}

    def drain() -> list[int]:
        mine = []
        while (lease := claim_next(Report.objects.filter(pk__in=ids))) is not None:
            mine.append(lease.pk)
            assert lease.finish()
        return mine

    taken = [pk for got in in_threads(6, drain) for pk in got]
    assert sorted(taken) == sorted(ids)  # none twice, none lost
    assert set(Report.objects.filter(pk__in=ids).values_list("status", "attempts")) == {("done", 1)}


def test_a_lease_renews_itself_while_the_work_runs(settings) -> None:  # type: ignore[no-untyped-def]
    settings.JOB_LEASE_SECONDS = 0.9  # renewed every 0.3 s
    [report] = reports(1)
    lease = claim(Report.objects.filter(pk=report.pk))
    first = Report.objects.get(pk=report.pk).lease_expires_at
    with lease.kept():
        time.sleep(1.5)  # longer than the lease: without renewal it would have lapsed
        later = Report.objects.get(pk=report.pk).lease_expires_at
        assert later > first and later > timezone.now()
        assert claim(Report.objects.filter(pk=report.pk)) is None  # still held: nobody else may take it
    lease.check()  # not lost


def test_a_worker_that_lost_its_lease_cannot_write_and_the_new_holders_work_stands() -> None:
    [report] = reports(1)
    old = claim(Report.objects.filter(pk=report.pk), claimed_by="old")
    Report.objects.filter(pk=report.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))  # it stalled
    new = claim(Report.objects.filter(pk=report.pk), claimed_by="new")
    assert new is not None and new.token != old.token

    assert new.write(stage="new holder's stage", progress=50)
    assert not old.write(stage="stale", progress=99)  # fenced: the token is no longer the row's
    assert old.lost.is_set()
    with pytest.raises(LeaseLost):
        old.check()
    with pytest.raises(LeaseLost), old.fenced():
        Report.objects.filter(pk=report.pk).update(computations=99)  # a write to the job's own data
    assert not old.finish(result={"stale": True})
    assert new.finish(result={"n": 1})

    row = Report.objects.get(pk=report.pk)
    assert (row.status, row.stage, row.progress, row.result, row.computations, row.attempts) == (
        "done", "new holder's stage", 50, {"n": 1}, 0, 2)


def test_a_fenced_write_holds_off_a_takeover_until_it_commits() -> None:
    """Inside `fenced()` the job row is locked: a claim by another worker waits for the commit, then finds
    the lease renewed and takes nothing."""
    [report] = reports(1)
    lease = claim(Report.objects.filter(pk=report.pk))
    Report.objects.filter(pk=report.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    taken: list[Lease | None] = []

    def rival() -> None:
        try:
            taken.append(claim(Report.objects.filter(pk=report.pk), claimed_by="rival"))
        finally:
            connection.close()

    with lease.fenced():
        thread = threading.Thread(target=rival)
        thread.start()
        time.sleep(0.5)
        assert thread.is_alive()  # blocked on the row lock
        Report.objects.filter(pk=report.pk).update(computations=1)
    thread.join()
    assert taken == [None]
    assert Report.objects.get(pk=report.pk).computations == 1


def test_a_job_claimed_max_attempts_times_fails_with_the_reason_instead_of_a_fourth_claim() -> None:
    [report] = reports(1)
    for _ in range(3):  # three workers took it and died
        assert claim(Report.objects.filter(pk=report.pk), max_attempts=3) is not None
        Report.objects.filter(pk=report.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    assert claim(Report.objects.filter(pk=report.pk), max_attempts=3) is None
    row = Report.objects.get(pk=report.pk)
    assert (row.status, row.attempts, row.claim_token) == ("failed", 3, None)
    assert row.error == exhausted_message(3) and "Gave up after 3 attempts" in row.error


# Child claims: an LLM request row is claimed with its run's lease token and written only inside that lease's
# fenced() (annotation/llm/request_claims.py). Every other model that holds a claim is a Job.
CHILD_CLAIMS = {"annotation.LLMRequest"}
OWN_LEASE = re.compile(r"^\s+(claim_token|executor_token|lease_until|lease_expires_at|heartbeat_at|claimed_by"
                       r"|claimed_at|holder)\s*=\s*models\.", re.M)


def test_lease_and_claim_fields_are_declared_once_by_the_abstract_job() -> None:
    declared = re.compile(rf"^\s+({'|'.join(LEASE_FIELDS)})\s*=\s*models\.", re.M)
    for model in apps.get_models():
        source = inspect.getsource(model)
        label = model._meta.label
        if issubclass(model, Job):
            assert not declared.findall(source), f"{label} declares the job's own fields again"
        elif label not in CHILD_CLAIMS:
            assert not OWN_LEASE.findall(source), f"{label} keeps a lease of its own: make it a hume.jobs Job"


def test_every_job_model_is_registered_and_one_beat_entry_requeues_them() -> None:
    jobs = {model._meta.label for model in apps.get_models() if issubclass(model, Job)}
    assert jobs <= {job_type.model for job_type in TYPES.values()}
    assert {"agreement.Report", "retrieval.Evaluation", "sage.SageRun", "model_runs.RunChunk",
            "retrieval.RankingChunk", "annotation.LLMRun", "model_runs.ModelRun", "escalation.EscalationPlan",
            "agreement.PPIEstimate"} <= jobs
    beat = [entry["task"] for entry in django_settings.CELERY_BEAT_SCHEDULE.values()]
    assert beat.count("jobs.requeue_lapsed") == 1
    assert beat == ["jobs.requeue_lapsed"]


def test_one_worker_ready_hook_resumes_every_job_type() -> None:
    """Before the job layer, three apps each had their own copy of the hook."""
    root = Path(__file__).resolve().parent.parent
    hooks = [path.relative_to(root).as_posix() for folder in ("hume", "tasks_app", "annotation", "agreement")
             for path in (root / folder).rglob("*.py") if "worker_ready.connect" in path.read_text(encoding="utf-8")]
    assert hooks == ["hume/jobs/tasks.py"]
    assert {"report", "model-run chunk", "split-ranking chunk", "retrieval evaluation", "sage run",
            "LLM run"} <= set(TYPES)


def test_claim_batch_hands_each_of_30_rows_to_exactly_one_of_6_racing_workers_and_counts_each_an_attempt() -> None:
    ids = {report.pk for report in reports(30)}

    def drain() -> list[int]:
        mine = []
        while (lease := claim_batch(Report.objects.filter(pk__in=ids), 4)) is not None:
            assert len(lease.pks) <= 4 and lease.pk == lease.pks[0]
            mine.extend(lease.pks)
            assert lease.finish()
        return mine

    taken = [pk for got in in_threads(6, drain) for pk in got]
    assert sorted(taken) == sorted(ids)  # none twice, none lost
    assert set(Report.objects.filter(pk__in=ids).values_list("status", "attempts")) == {("done", 1)}


def test_a_batch_lease_writes_nothing_once_one_of_its_rows_was_taken_over_and_skips_rows_out_of_attempts() -> None:
    first, second, spent = reports(3)
    Report.objects.filter(pk=spent.pk).update(attempts=django_settings.JOB_MAX_ATTEMPTS)
    lease = claim_batch(Report.objects.filter(pk__in=[first.pk, second.pk, spent.pk]), 10)
    assert lease.pks == (first.pk, second.pk)  # the row out of attempts is left to `claim`, which fails it
    Report.objects.filter(pk=second.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    other = claim(Report.objects.filter(pk=second.pk))  # its lease lapsed: another worker takes it over
    assert other is not None
    with pytest.raises(LeaseLost), lease.fenced():
        lease.finish()
    assert not lease.finish() and lease.lost.is_set()
    assert Report.objects.get(pk=first.pk).status == "running"  # not finished by the lost batch: it lapses
    assert Report.objects.get(pk=second.pk).claim_token == other.token
