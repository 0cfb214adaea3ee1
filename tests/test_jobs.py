"""Sending a Celery job by task name (hume/jobs/sending.py, hume/jobs/outbox.py): services use it instead of importing
their tasks.py."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from celery.exceptions import NotRegistered
from django.utils import timezone
from kombu.exceptions import OperationalError

from hume import jobs
from hume.jobs import outbox
from hume.jobs.models import UnsentMessage
from hume.jobs.sending import QUICK_RETRY
from hume.lib.celery_app import app


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


def test_the_beat_sends_stored_messages_past_the_grace_and_keeps_one_the_broker_refuses(
        db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The outbox's look (hume/jobs/outbox.py, run by the beat entry): a message stored 10 s ago is sent with
    its countdown shortened by the wait; one stored just now may still be being sent by its web process and is
    left alone; a refusal keeps the row, counted, with the reason (issue 35, item 5)."""
    sent: list[tuple[Any, dict[str, Any]]] = []
    task = jobs.registered("model_runs.score_run")
    monkeypatch.setattr(task, "apply_async", lambda args, **options: sent.append((args, options)))
    old = UnsentMessage.objects.create(task="model_runs.score_run", args=[7], options={"countdown": 30})
    UnsentMessage.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    young = UnsentMessage.objects.create(task="model_runs.score_run", args=[8], options={})

    assert outbox.send_unsent() == ["model_runs.score_run(7,)"]
    assert [args for args, _ in sent] == [(7,)]
    assert 19 < sent[0][1]["countdown"] <= 20  # 30 s asked, 10 s of it already waited in the outbox
    assert list(UnsentMessage.objects.values_list("pk", flat=True)) == [young.pk]

    def refuse(args: Any, **options: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(task, "apply_async", refuse)
    UnsentMessage.objects.filter(pk=young.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    assert outbox.send_unsent() == []
    kept = UnsentMessage.objects.get()
    assert (kept.pk, kept.sends_failed) == (young.pk, 1)
    assert kept.error == "OperationalError: Error 111 connecting to 127.0.0.1:6379. Connection refused."
