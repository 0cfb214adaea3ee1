"""Sending a Celery job by task name (hume/jobs/sending.py, hume/jobs/outbox.py): services use it instead of importing
their tasks.py."""
from __future__ import annotations

from typing import Any

import pytest
from celery.exceptions import NotRegistered

from hume import jobs
from hume.celery import app
from hume.jobs.models import UnsentMessage
from hume.jobs.sending import QUICK_RETRY


def test_a_job_sent_by_name_runs_the_registered_task_in_eager_mode() -> None:
    """send_task would ignore task_always_eager; the registered task's apply_async honours it."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        assert jobs.enqueue("agreement.ping", "hello").get() == "hello"
    finally:
        app.conf.task_always_eager = before


def test_an_unknown_task_name_is_an_error_not_a_message_nobody_reads() -> None:
    with pytest.raises(NotRegistered):
        jobs.enqueue("agreement.no_such_task", 1)


def test_a_job_sent_on_commit_keeps_its_options_and_waits_for_the_commit(
        db: None, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any) -> None:
    sent: list[tuple[Any, dict[str, Any]]] = []
    task = jobs.registered("model_runs.score_run")
    monkeypatch.setattr(task, "apply_async", lambda args, **options: sent.append((args, options)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        jobs.enqueue_on_commit("model_runs.score_run", 7, countdown=3)
    assert sent == [] and len(callbacks) == 1
    stored = UnsentMessage.objects.get()  # the message is kept with the transaction until the broker takes it
    assert (stored.task, stored.args, stored.options) == ("model_runs.score_run", [7], {"countdown": 3})
    callbacks[0]()
    # no result asked for (a request never waits on the result backend), two tries at most (issue 35, item 5)
    assert sent == [((7,), {"countdown": 3, "ignore_result": True, "retry": True, "retry_policy": QUICK_RETRY})]
    assert not UnsentMessage.objects.exists()
