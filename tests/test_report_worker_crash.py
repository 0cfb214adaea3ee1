"""No report is lost or stored twice: workers killed mid-run, and the same job delivered twice at once.

Real workers on the test database; `start_worker(report_pause=...)` runs a worker whose claimed runs pause
after reading their answers (tests/slow_report_worker_settings.py), so they can be caught mid-run.
"""
from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from agreement.core.reports import request_report
from agreement.models import Report
from agreement.tasks import compute_report, rerun_wait
from hume.jobs import recovery
from hume.jobs.registry import TYPES
from tests.report_builders import answers_from_columns, build_task, cli_report, import_answers, wait_for_report

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def small_task(name: str):
    """Two annotators on twelve items (six answers twice, so the pair shares Cohen's κ's minimum of 10):
    p_o = 5/6, p_e = 0.5 → κ = 2/3."""
    task = build_task("classification", name, [{"text": f"t{i}", "label": "a"} for i in range(12)], labels=["a", "b"])
    import_answers(task, answers_from_columns({"ann1": ["a", "a", "a", "b", "b", "b"] * 2,
                                               "ann2": ["a", "a", "a", "b", "b", "a"] * 2}))
    return task


def wait_until_running(task, timeout: float = 60) -> Report:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = Report.objects.filter(task=task, status=Report.Status.RUNNING).first()
        if report:
            return report
        time.sleep(0.1)
    raise AssertionError("the report never started running")


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def pool_processes(worker_pid: int) -> list[int]:
    """The worker's pool processes, as the worker reports them (its embedded beat is a child process too)."""
    from hume.lib.celery_app import app

    pids = [pid for stats in (app.control.inspect(timeout=5, limit=1).stats() or {}).values()
            for pid in stats["pool"]["processes"]]
    assert set(pids) <= set(children_of(worker_pid))
    return pids


def kill_whole_worker(worker) -> None:
    os.killpg(worker.pid, signal.SIGKILL)  # the main process and its pool: nothing can requeue or finish
    worker.wait(timeout=30)


def test_a_report_survives_its_whole_worker_being_killed_mid_run(start_worker) -> None:
    """Production settings: the broker's hour-long visibility timeout is not waited for; the killed run's
    lease (JOB_LEASE_SECONDS, renewed by a live run) lapses, and the next worker to start takes the report over."""
    task = small_task("killed-worker")
    doomed = start_worker(report_pause=120)
    request_report(task.pk)
    running = wait_until_running(task)
    time.sleep(settings.JOB_LEASE_SECONDS / 3 + 2)  # the live run renewed its lease at least once
    renewed = Report.objects.get(task=task)
    assert renewed.lease_expires_at > running.lease_expires_at

    kill_whole_worker(doomed)
    assert Report.objects.get(task=task).status == Report.Status.RUNNING
    started = time.monotonic()
    start_worker()
    report = wait_for_report(task, timeout=60)

    assert time.monotonic() - started < 60
    assert report.status == Report.Status.DONE
    assert report.claimed_by != running.claimed_by  # a new message took the dead claim over
    assert (report.attempts, report.computations) == (2, 1)
    assert report.result["agreement"]["cohen_kappa_mean"] == pytest.approx(2 / 3)
    assert cli_report(task)["agreement"]["cohen_kappa_mean"] == pytest.approx(2 / 3)


def test_recompute_on_a_dead_run_queues_it_at_once(start_worker, client, dave) -> None:
    """Once the dead run's lease has lapsed, Recompute answers "queued" and a running worker computes it."""
    task = small_task("recompute-dead")
    doomed = start_worker(report_pause=120)
    request_report(task.pk)
    wait_until_running(task)
    kill_whole_worker(doomed)
    lapse = Report.objects.get(task=task).lease_expires_at  # read before a starting worker may take it over
    start_worker()  # alive all along from here
    while timezone.now() <= lapse:
        time.sleep(0.2)

    client.force_login(dave)
    response = client.post(reverse("api-report-compute", kwargs={"task_id": task.pk}))

    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    report = wait_for_report(task, timeout=30)
    assert report.status == Report.Status.DONE
    assert report.result["agreement"]["percent_agreement"] == pytest.approx(5 / 6)


def test_the_status_poll_requeues_a_run_whose_lease_lapsed(client, dave) -> None:
    task = small_task("poll-dead")
    Report.objects.create(task=task, status=Report.Status.RUNNING, stage="answers read", progress=25,
                          started_at=timezone.now(), lease_expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(dave)

    response = client.get(reverse("agreement:status", args=[task.pk]), HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert Report.objects.get(task=task).status == Report.Status.QUEUED
    assert "answers read" not in response.content.decode()


def test_a_report_survives_its_pool_process_being_killed_mid_run(start_worker) -> None:
    """acks_late + reject_on_worker_lost: the worker requeues the message of a pool process that died."""
    task = small_task("killed-pool-process")
    worker = start_worker(report_pause=4)
    request_report(task.pk)
    wait_until_running(task)

    (child,) = pool_processes(worker.pid)
    os.kill(child, signal.SIGKILL)
    report = wait_for_report(task, timeout=120)

    assert report.status == Report.Status.DONE
    assert (report.attempts, report.computations) == (2, 1)
    assert report.result["agreement"]["percent_agreement"] == pytest.approx(5 / 6)


def test_the_same_report_job_delivered_twice_at_once_stores_one_report(start_worker) -> None:
    task = small_task("duplicated")
    start_worker(concurrency=2, report_pause=3)
    Report.objects.create(task=task, status=Report.Status.QUEUED)

    first, second = compute_report.delay(task.pk), compute_report.delay(task.pk)
    outcomes = sorted([first.get(timeout=120), second.get(timeout=120)])

    assert outcomes == ["computed", "not claimed: report is running"]
    report = Report.objects.get(task=task)
    assert (Report.objects.filter(task=task).count(), report.attempts, report.computations) == (1, 1, 1)
    assert report.result["n_answers"] == 24


def test_a_starting_worker_looks_at_running_reports_and_long_queued_ones_only() -> None:
    """What `jobs.resume` (sent by each worker as it starts) re-sends, and when: a running report when its
    lease lapses, a report queued for longer than a lease at once; one queued just now keeps its own message."""
    now = timezone.now()
    running, stale, fresh, done = (small_task(name) for name in ("running", "stale", "fresh", "done"))
    Report.objects.create(task=running, status=Report.Status.RUNNING, lease_expires_at=now + timedelta(seconds=12))
    Report.objects.create(task=stale, status=Report.Status.QUEUED, requested_at=now - timedelta(seconds=60))
    Report.objects.create(task=fresh, status=Report.Status.QUEUED, requested_at=now)
    Report.objects.create(task=done, status=Report.Status.DONE, requested_at=now - timedelta(seconds=60))

    looks = dict(recovery.waiting(TYPES["report"]))

    assert set(looks) == {running.pk, stale.pk}
    assert looks[stale.pk] == 0
    assert 6 < looks[running.pk] <= 12  # the lease's remaining seconds (a loaded machine takes some)


def test_a_recompute_during_a_run_looks_again_when_the_runs_lease_would_lapse() -> None:
    """compute_report finding the report running: if a re-run was asked after the run started (Recompute on a
    run that may be dead), its message comes back one second after the lease's end; a mere copy does not."""
    now = timezone.now()
    asked, copy = small_task("asked-again"), small_task("mere-copy")
    for task, requested in ((asked, now), (copy, now - timedelta(seconds=5))):
        Report.objects.create(task=task, status=Report.Status.RUNNING, requested_at=requested,
                              started_at=now - timedelta(seconds=1), lease_expires_at=now + timedelta(seconds=8))

    assert 3 < rerun_wait(asked.pk) <= 9  # the lease's remaining seconds, plus one
    assert rerun_wait(copy.pk) is None
