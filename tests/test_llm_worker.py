"""LLM runs through a REAL Celery worker process talking to a real local chat-completions server.

The worker is a separate process: it reaches the test's server on 127.0.0.1 and reads the API key from
its environment, exactly as in production. Heartbeats are 1 s here so a killed worker is noticed quickly.
"""
from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest

from annotation.llm.models import LLMRequest, LLMRun
from annotation.llm.run_control import create_run, enqueue_run
from annotation.models import Annotation
from tests.conftest import require_postgres
from tests.llm_helpers import API_KEY_ENV, make_batch, make_judge, make_task
from tests.llm_server import ChatServer, malformed, server_error, slow, throttled, valid

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.usefixtures("local_llm_endpoints")]


@pytest.fixture(autouse=True)
def worker_environment(monkeypatch: pytest.MonkeyPatch, settings) -> None:
    """What the worker process inherits: the key variable."""
    monkeypatch.setenv(API_KEY_ENV, "sk-test-worker-5555")


def wait_until(condition: Callable[[], bool], timeout: float = 120, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def all_finished(runs: list[LLMRun]) -> bool:
    return all(status in ("done", "failed", "cancelled") for status in
               LLMRun.objects.filter(pk__in=[r.pk for r in runs]).values_list("status", flat=True))


def answers_of(annotator) -> dict[str, object]:
    return dict(Annotation.objects.filter(annotator=annotator).values_list("item__external_id", "value"))


def test_batches_of_four_kinds_are_answered_by_a_worker_with_retries_failures_and_no_repeat(start_worker) -> None:
    require_postgres()
    tasks = {kind: make_task(kind, 3, prefix=prefix, name=f"{kind} llm")
             for kind, prefix in [("classification", "c"), ("reranking", "k"), ("sts", "s"), ("graded_relevance", "g")]}
    answers = {marker: answer for _, _, task_answers in tasks.values() for marker, answer in task_answers.items()}
    script = {
        "[c02]": [malformed(), valid("positive")],
        "[k01]": [throttled(1)],
        "[s02]": [server_error()],
        "[s03]": [malformed(), malformed()],
        "[g01]": [valid({"d1": 11, "d2": 0})],
        "[g02]": [slow(2.5)],
    }
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url, timeout_seconds=1.0)
        batches = {kind: make_batch(task, items) for kind, (task, items, _) in tasks.items()}
        start_worker()
        runs = [create_run(judge.annotator, batch=batch) for batch in batches.values()]
        for run in runs:
            enqueue_run(run)
        wait_until(lambda: all_finished(runs), what="the four runs")
        first_count = server.count

        expected = {**answers, "[c02]": "positive"}
        del expected["[s03]"]
        assert answers_of(judge.annotator) == expected
        assert server.counts() == {**dict.fromkeys(answers, 1), "[c02]": 2, "[k01]": 2, "[s02]": 2, "[s03]": 2,
                                   "[g01]": 2, "[g02]": 2}
        failed = LLMRequest.objects.get(status="failed")
        assert failed.item.external_id == "[s03]" and len(failed.raw_outputs) == 2
        assert failed.raw_outputs[0]["content"] == malformed().content
        assert {r.status for r in LLMRun.objects.all()} == {"done"}
        assert sum(LLMRun.objects.values_list("http_requests", flat=True)) == first_count == 18

        again = [create_run(judge.annotator, batch=batch) for batch in batches.values()]
        for run in again:
            enqueue_run(run)
        wait_until(lambda: all_finished(again), what="the re-runs")
        assert server.count == first_count
        assert Annotation.objects.filter(annotator=judge.annotator).count() == 11


def test_a_run_survives_its_worker_being_killed_without_asking_again_for_finished_items(start_worker) -> None:
    require_postgres()
    task, _items, answers = make_task("sts", 10, prefix="w")
    with ChatServer(answers, {marker: [slow(0.4, answer)] for marker, answer in answers.items()}) as server:
        judge = make_judge("judge-w", server.base_url, max_concurrency=1)
        worker = start_worker()
        run = create_run(judge.annotator, task=task)
        enqueue_run(run)
        wait_until(lambda: Annotation.objects.filter(annotator=judge.annotator).count() >= 3, what="3 answers")
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=20)
        finished_before_kill = set(answers_of(judge.annotator))
        assert LLMRun.objects.get(pk=run.pk).status == "running"

        start_worker()
        wait_until(lambda: all_finished([run]), what="the resumed run")

        run.refresh_from_db()
        assert run.status == "done"
        assert answers_of(judge.annotator) == answers
        counts = server.counts()
        assert all(counts[marker] == 1 for marker in finished_before_kill)
        assert sum(counts.values()) <= len(answers) + 1  # at most the item in flight at the kill is asked twice
        assert LLMRequest.objects.filter(annotator=judge.annotator, status="succeeded").count() == 10
