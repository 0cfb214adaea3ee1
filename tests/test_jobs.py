"""Sending a Celery job by task name (hume/jobs/__init__.py): services use it instead of importing their tasks.py."""
from __future__ import annotations

from typing import Any

import pytest
from celery.exceptions import NotRegistered

from hume import jobs
from hume.celery import app


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
    callbacks[0]()
    assert sent == [((7,), {"countdown": 3})]
