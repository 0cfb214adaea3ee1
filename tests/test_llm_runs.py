"""LLM runs against a real local chat-completions server, executed in the test process.

What is checked here is the run's behaviour (answers stored, retries, failures kept, idempotence, pause,
limits); tests/test_llm_worker.py runs the same code through a real Celery worker.
"""
from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.llm.asking import Outcome
from annotation.llm.models import LLMRequest, LLMRun
from annotation.llm.request_claims import Claim, Pending, claim, claim_many, store_many
from annotation.llm.run_control import cancel_run, create_run, is_stalled, pause_run, resume_run
from annotation.llm.run_executor import acquire, execute_run
from annotation.llm.run_progress import run_progress
from annotation.models import Annotation, Hold
from hume.jobs.lease import LeaseLost
from hume.jobs.lease import claim as claim_job
from tests.llm_helpers import API_KEY_ENV, make_batch, make_judge, make_task
from tests.llm_server import ChatServer, Reply, malformed, server_error, slow, throttled, valid

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")  # the fake LLM servers listen on 127.0.0.1

KEY = "sk-test-runs-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(API_KEY_ENV, KEY)
    return KEY


def run_to_end(run: LLMRun) -> str:
    """Execute slices until the run stops asking to continue (what the Celery task does by re-enqueueing)."""
    for _ in range(50):
        verdict = execute_run(run.pk)
        if verdict != "continue":
            return verdict
    raise AssertionError("the run never finished")


def stored(judge_annotator) -> dict[str, object]:
    return {a.item.external_id: a.value for a in Annotation.objects.filter(annotator=judge_annotator)
            .select_related("item")}


@pytest.mark.django_db
def test_a_run_stores_each_validated_answer_once_as_an_llm_annotation() -> None:
    task, items, answers = make_task("classification", 4)
    batch = make_batch(task, items)
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url)
        run = create_run(judge.annotator, batch=batch)
        assert run_to_end(run) == "done"
    run.refresh_from_db()
    assert run.status == "done"
    assert stored(judge.annotator) == {m: a for m, a in answers.items()}
    assert set(Annotation.objects.filter(annotator=judge.annotator).values_list("source", "batch_id")) == {
        ("llm", batch.pk)}
    assert server.count == 4
    assert {s.authorization for s in server.seen} == {f"Bearer {KEY}"}
    assert {s.body["model"] for s in server.seen} == {"model-judge-a"}
    assert (run.http_requests, run.prompt_tokens, run.completion_tokens) == (4, 400, 80)
    assert list(LLMRequest.objects.values_list("status", flat=True)) == ["succeeded"] * 4
    assert LLMRequest.objects.first().reasoning.startswith("Judged [m")
    assert run_progress(run).percent == 100


@pytest.mark.django_db
def test_answers_never_take_leases_and_the_annotator_is_a_model() -> None:
    task, _items, answers = make_task("sts", 2)
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url)
        run_to_end(create_run(judge.annotator, task=task))
    assert Hold.objects.count() == 0
    assert judge.annotator.agent == "llm"
    assert not judge.annotator.user.has_usable_password()
    assert stored(judge.annotator) == answers


@pytest.mark.django_db
def test_the_prompt_carries_the_instructions_and_the_item_but_never_gold() -> None:
    task, _items, answers = make_task("graded_relevance", 2)
    with ChatServer(answers) as server:
        run_to_end(create_run(make_judge("judge-a", server.base_url).annotator, task=task))
    bodies = [json.dumps(s.body) for s in server.seen]
    assert all("INSTRUCTION-MARK-7731" in b and "mRNA vaccines deliver instructions" in b for b in bodies)
    assert not any("7.77" in b for b in bodies)
    assert all(s.body["response_format"] == {"type": "json_object"} and s.body["temperature"] == 0
               for s in server.seen)


@pytest.mark.django_db
def test_a_malformed_answer_is_asked_again_then_kept_as_a_failure_with_its_raw_output() -> None:
    task, _items, answers = make_task("reranking", 2)
    script = {"[m01]": [malformed(), valid({"c1": 1, "c2": 0})], "[m02]": [malformed(), malformed()]}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url)
        run = create_run(judge.annotator, task=task)
        run_to_end(run)
    assert server.counts() == {"[m01]": 2, "[m02]": 2}
    retry = [s.body["messages"] for s in server.seen if s.marker == "[m01]"][1]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "not a JSON object" in retry[-1]["content"]
    assert stored(judge.annotator) == {"[m01]": {"c1": 1, "c2": 0}}
    failed = LLMRequest.objects.get(status="failed")
    assert failed.item.external_id == "[m02]" and failed.failure_kind == "malformed"
    assert [o["content"] for o in failed.raw_outputs] == [malformed().content] * 2
    assert failed.attempts == 2 and failed.prompt_tokens == 200
    assert run_progress(run).failed == 1 and run_progress(run).percent == 100


@pytest.mark.django_db
def test_an_out_of_range_score_fails_the_same_validation_as_a_human_submit() -> None:
    task, _items, answers = make_task("graded_relevance", 2)
    script = {"[m01]": [valid({"d1": 11, "d2": 0}), valid({"d1": 9, "d2": 0})],
              "[m02]": [valid({"d1": 11, "d2": 0}), valid({"d1": -1, "d2": 0})]}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url)
        run_to_end(create_run(judge.annotator, task=task))
    assert stored(judge.annotator) == {"[m01]": {"d1": 9, "d2": 0}}
    failed = LLMRequest.objects.get(status="failed")
    assert "outside the scale 0–10" in failed.raw_outputs[0]["problem"]
    assert "-1 is outside the scale 0–10" in failed.error


@pytest.mark.django_db
def test_429_waits_for_retry_after_and_500_is_retried_a_bounded_number_of_times() -> None:
    task, _items, answers = make_task("sts", 3)
    script = {"[m01]": [throttled(1)], "[m02]": [server_error()], "[m03]": [server_error()] * 3}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=1, max_retries=2)
        run = create_run(judge.annotator, task=task)
        run_to_end(run)
    times = [s.at for s in server.seen if s.marker == "[m01]"]
    assert len(times) == 2 and times[1] - times[0] >= 0.95
    assert server.counts() == {"[m01]": 2, "[m02]": 2, "[m03]": 3}
    assert set(stored(judge.annotator)) == {"[m01]", "[m02]"}
    failed = LLMRequest.objects.get(status="failed")
    assert (failed.failure_kind, failed.http_status, failed.attempts) == ("http", 500, 3)
    assert "internal error" in failed.raw_outputs[0]["body"]
    run.refresh_from_db()
    assert run.status == "done" and run.http_requests == 7


@pytest.mark.django_db
def test_a_reply_slower_than_the_client_timeout_is_retried_then_recorded_as_a_timeout() -> None:
    task, _items, answers = make_task("sts", 2)
    script = {"[m01]": [slow(2.5)], "[m02]": [slow(2.5), slow(2.5), slow(2.5)]}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url, timeout_seconds=1.0, max_retries=2)
        run_to_end(create_run(judge.annotator, task=task))
    assert server.counts() == {"[m01]": 2, "[m02]": 3}
    assert set(stored(judge.annotator)) == {"[m01]"}
    assert LLMRequest.objects.get(status="failed").failure_kind == "timeout"


@pytest.mark.django_db
def test_a_rerun_pays_for_nothing_already_answered_or_failed_unless_asked_to_retry_failures() -> None:
    task, items, answers = make_task("classification", 3)
    batch = make_batch(task, items)
    with ChatServer(answers, {"[m02]": [malformed(), malformed()]}) as server:
        judge = make_judge("judge-a", server.base_url)
        run_to_end(create_run(judge.annotator, batch=batch))
        assert server.count == 4
        again = create_run(judge.annotator, batch=batch)
        assert run_to_end(again) == "done"
        assert server.count == 4
        retry = create_run(judge.annotator, batch=batch, retry_failed=True)
        run_to_end(retry)
    assert server.counts() == {"[m01]": 1, "[m02]": 3, "[m03]": 1}
    assert Annotation.objects.filter(annotator=judge.annotator).count() == 3
    row = LLMRequest.objects.get(item__external_id="[m02]")
    assert row.status == "succeeded" and len(row.raw_outputs) == 3 and row.attempts == 3
    again.refresh_from_db()
    assert again.status == "done" and again.http_requests == 0


@pytest.mark.django_db
def test_a_claim_of_a_live_run_is_respected_and_a_lapsed_ones_is_taken_over() -> None:
    task, items, _answers = make_task("sts", 1)
    judge = make_judge("judge-a", "http://127.0.0.1:9/v1")
    run = create_run(judge.annotator, task=task)
    other = create_run(judge.annotator, task=task)
    theirs = claim_job(LLMRun.objects.filter(pk=other.pk))
    first = claim(other, theirs, items[0])
    assert first is not None and first.claimed_by == theirs.token  # the request claim carries the run's lease
    mine = claim_job(LLMRun.objects.filter(pk=run.pk))
    assert claim(run, mine, items[0]) is None
    LLMRun.objects.filter(pk=other.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    taken = claim(run, mine, items[0])
    assert taken is not None and taken.pk == first.pk
    taken.refresh_from_db()
    assert taken.claimed_by == mine.token and taken.run_id == run.pk
    assert LLMRequest.objects.count() == 1


@pytest.mark.django_db
def test_a_holder_that_lost_the_run_stores_no_answer_and_claims_nothing() -> None:
    """The request claims are children of the run's lease: once another worker holds the run, the old holder's
    answer is refused (LeaseLost, nothing written) and the new holder takes the claim over and asks itself."""
    task, items, answers = make_task("sts", 2)
    judge = make_judge("judge-a", "http://127.0.0.1:9/v1")
    run = create_run(judge.annotator, task=task)
    old, verdict = acquire(run.pk)
    assert verdict == "acquired"
    pending = [Pending(item.pk, item.uid, item.payload) for item in items]
    [held] = claim_many(run, old, pending[:1])
    LLMRun.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))  # it stalled
    new, verdict = acquire(run.pk)
    assert verdict == "acquired" and new.token != old.token

    answer = Outcome(value=answers["[m01]"], ok=True, attempts=1, prompt_tokens=10)
    with pytest.raises(LeaseLost):
        store_many(run, old, [(held, answer)])
    with pytest.raises(LeaseLost):
        claim_many(run, old, pending[1:])

    assert not Annotation.objects.filter(annotator=judge.annotator).exists()
    assert LLMRun.objects.get(pk=run.pk).http_requests == 0  # the counters were not written either
    assert list(LLMRequest.objects.values_list("status", "claimed_by")) == [("claimed", old.token)]
    taken = claim_many(run, new, pending)
    assert len(taken) == 2 and taken[0].pk == held.pk  # the lapsed claim taken over, and the second item's
    assert set(LLMRequest.objects.values_list("claimed_by", flat=True)) == {new.token}
    store_many(run, new, [(Claim(held.pk, held.item_id, held.claimed_at), answer)])
    assert Annotation.objects.get(annotator=judge.annotator).value == answers["[m01]"]


@pytest.mark.django_db
def test_a_stalled_run_is_resumed_and_its_dead_executors_claim_is_asked_again() -> None:
    task, items, answers = make_task("sts", 3)
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url)
        run = create_run(judge.annotator, task=task)
        dead = claim_job(LLMRun.objects.filter(pk=run.pk))  # a worker took the run and its first item, then died
        claim(run, dead, items[0])
        assert not is_stalled(LLMRun.objects.get(pk=run.pk)) and execute_run(run.pk) == "busy-run"
        LLMRun.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert is_stalled(LLMRun.objects.get(pk=run.pk)) and resume_run(run)
        assert run_to_end(run) == "done"
    assert server.counts() == {"[m01]": 1, "[m02]": 1, "[m03]": 1}
    assert stored(judge.annotator) == answers


@pytest.mark.django_db
def test_requests_respect_max_concurrency_and_requests_per_minute() -> None:
    task, _items, answers = make_task("sts", 4)
    with ChatServer(answers, {f"[m0{i}]": [slow(1.0)] for i in range(1, 5)}) as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=2, timeout_seconds=5)
        run_to_end(create_run(judge.annotator, task=task))
    assert server.max_in_flight == 2 and server.count == 4
    task2, _items2, answers2 = make_task("sts", 4, prefix="r", name="paced")
    with ChatServer(answers2) as server:
        judge = make_judge("judge-b", server.base_url, max_concurrency=4, requests_per_minute=120)
        run_to_end(create_run(judge.annotator, task=task2))
    starts = sorted(s.at for s in server.seen)
    # 120/min: starts 0.5 s apart, so the 4th comes ≥ 1.5 s after the 1st (less the 1st one's own send delay)
    assert len(starts) == 4 and starts[-1] - starts[0] >= 1.3


@pytest.mark.django_db
def test_a_refused_key_stops_the_run_instead_of_failing_every_item() -> None:
    task, _items, answers = make_task("sts", 3)
    with ChatServer(answers, {f"[m0{i}]": [Reply(status=401, body='{"error": "bad key"}')] for i in (1, 2, 3)}) \
            as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=1)
        run = create_run(judge.annotator, task=task)
        assert run_to_end(run) == "done"
    run.refresh_from_db()
    assert run.status == "failed" and "HTTP 401" in run.error
    assert server.count == 1
    assert LLMRequest.objects.count() == 0  # nothing was learnt about the item: a later run asks again


@pytest.mark.django_db
def test_a_refused_key_sends_no_queued_request_after_the_refusal() -> None:
    """Four in flight and eight queued behind them: once a 401 comes back, the pool starts none of the queued."""
    task, _items, answers = make_task("sts", 12)
    refusals = {f"[m{i:02d}]": [Reply(status=401, body='{"error": "bad key"}')] for i in range(1, 13)}
    with ChatServer(answers, refusals) as server:
        run = create_run(make_judge("judge-a", server.base_url, max_concurrency=4).annotator, task=task)
        assert run_to_end(run) == "done"
    run.refresh_from_db()
    assert run.status == "failed" and "HTTP 401" in run.error
    assert 1 <= server.count <= 4  # only those already in flight; twelve without the halt
    assert LLMRequest.objects.count() == 0


@pytest.mark.django_db
def test_an_unset_key_variable_fails_the_run_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV)
    task, _items, answers = make_task("sts", 1)
    with ChatServer(answers) as server:
        run = create_run(make_judge("judge-a", server.base_url).annotator, task=task)
        run_to_end(run)
    run.refresh_from_db()
    assert run.status == "failed" and API_KEY_ENV in run.error and server.count == 0


@pytest.mark.django_db
def test_clustering_can_be_answered_with_an_id_per_text_object() -> None:
    task, _items, answers = make_task("clustering", 2)
    script = {"[m02]": [valid({"1": "a", "2": "a", "3": "b"}), valid({"1": "a", "2": "a", "3": "b", "4": "b"})]}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url)
        run_to_end(create_run(judge.annotator, task=task))
    assert stored(judge.annotator) == {"[m01]": ["animals", "animals", "fin", "fin"], "[m02]": ["a", "a", "b", "b"]}
    retry = [s.body["messages"][-1]["content"] for s in server.seen if s.marker == "[m02]"][1]
    assert "missing ['4']" in retry


@pytest.mark.django_db(transaction=True)
def test_pause_stops_taking_items_and_resume_finishes_without_asking_twice() -> None:
    task, _items, answers = make_task("sts", 6)
    paused = threading.Event()
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=1)
        run = create_run(judge.annotator, task=task)

        def pause_after_two(seen: object) -> None:
            if server.count == 2 and not paused.is_set():
                paused.set()
                pause_run(run)

        server.on_request = pause_after_two
        assert run_to_end(run) == "done"
        run.refresh_from_db()
        assert (run.state, run.status, run.paused, server.count) == ("paused", "queued", True, 2)
        assert execute_run(run.pk) == "gone"  # a held run is not claimed
        assert Annotation.objects.filter(annotator=judge.annotator).count() == 2
        assert resume_run(run)
        run_to_end(run)
    run.refresh_from_db()
    assert run.status == "done" and server.count == 6
    assert set(server.counts().values()) == {1}


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_the_run_for_good() -> None:
    task, _items, answers = make_task("sts", 5)
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=1)
        run = create_run(judge.annotator, task=task)
        server.on_request = lambda seen: cancel_run(run) if server.count == 1 else None
        run_to_end(run)
        assert not resume_run(run)
        assert execute_run(run.pk) == "gone"
    run.refresh_from_db()
    assert run.status == "cancelled" and server.count == 1
    assert Annotation.objects.filter(annotator=judge.annotator).count() == 1


@pytest.mark.django_db
def test_a_slice_that_ends_gives_back_its_unsent_claims_and_the_next_slices_ask_each_item_once(settings) -> None:
    settings.LLM_SLICE_SECONDS = 0.3
    task, _items, answers = make_task("sts", 24)  # a slice asks ~4-8: two in flight, two queued per slot
    with ChatServer(answers) as server:
        server.on_request = lambda seen: time.sleep(0.15)
        judge = make_judge("judge-a", server.base_url, max_concurrency=2)
        run = create_run(judge.annotator, task=task)
        verdicts = [execute_run(run.pk)]
        while verdicts[-1] == "continue":
            verdicts.append(execute_run(run.pk))
    assert verdicts[0] == "continue" and verdicts[-1] == "done" and len(verdicts) > 2
    assert set(server.counts().values()) == {1} and server.count == 24
    assert stored(judge.annotator) == answers
    assert set(LLMRequest.objects.values_list("status", flat=True)) == {"succeeded"}
    assert LLMRequest.objects.count() == 24


@pytest.mark.django_db
def test_a_run_whose_every_request_failed_is_failed_with_the_reason() -> None:
    """Issue 28: six of six requests failed and the run said "completed" with a full bar."""
    task, _items, answers = make_task("sts", 2)
    script = {"[m01]": [server_error()] * 2, "[m02]": [server_error()] * 2}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url, max_retries=1)
        run = create_run(judge.annotator, task=task)
        run_to_end(run)
    run.refresh_from_db()
    assert server.counts() == {"[m01]": 2, "[m02]": 2}
    assert run.status == "failed" and run.finished_at is not None
    assert run.error.startswith("every request failed (2 item(s), none answered); the last error: ")
    assert "500" in run.error


@pytest.mark.django_db
def test_the_old_run_statuses_are_migrated_to_the_job_layers_vocabulary() -> None:
    """annotation/migrations/0010: completed is done, paused a held queued run, a run executing under the old
    heartbeat is queued again (no lease covers it)."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("annotation.migrations.0012_llm_runs_on_job_layer")
    task, _items, _answers = make_task("sts", 1)
    judge = make_judge("judge-a", "http://127.0.0.1:9/v1")
    old = {status: create_run(judge.annotator, task=task).pk for status in ("completed", "paused", "running", "failed")}
    for status, pk in old.items():
        LLMRun.objects.filter(pk=pk).update(status=status)

    migration.to_job_vocabulary(apps, None)

    now = {status: LLMRun.objects.values_list("status", "paused").get(pk=pk) for status, pk in old.items()}
    assert now == {"completed": ("done", False), "paused": ("queued", True), "running": ("queued", False),
                   "failed": ("failed", False)}
    migration.to_old_vocabulary(apps, None)
    assert dict(LLMRun.objects.values_list("pk", "status")) == {old["completed"]: "completed", old["paused"]: "paused",
                                                                old["running"]: "queued", old["failed"]: "failed"}


@pytest.mark.django_db
def test_replies_that_fail_to_parse_are_counted_as_http_requests() -> None:
    """Issue 35, item 8: a run whose replies did not parse (an answer that is not JSON, a 200 that is not a chat
    completion) read http_requests = 0 although each request was sent, and paid for."""
    not_a_completion = Reply(body='{"object": "error", "detail": "overloaded"}')
    deep = "[" * 100_000
    task, _items, answers = make_task("sts", 4)
    script = {"[m01]": [malformed()] * 3, "[m02]": [not_a_completion] * 3,
              "[m03]": [Reply(content=deep)] * 3, "[m04]": [Reply(body=deep)] * 3}
    with ChatServer(answers, script) as server:
        judge = make_judge("judge-a", server.base_url, max_concurrency=1, max_answer_retries=2)
        run = create_run(judge.annotator, task=task)
        run_to_end(run)
    assert server.counts() == {"[m01]": 3, "[m02]": 3, "[m03]": 3, "[m04]": 3}
    assert stored(judge.annotator) == {}
    run.refresh_from_db()
    assert run.http_requests == 12
    assert sorted(LLMRequest.objects.values_list("attempts", flat=True)) == [3, 3, 3, 3]
    errors = dict(LLMRequest.objects.values_list("item__position", "error"))  # position 2: [m03], 3: [m04]
    assert errors[2] == "the reply is JSON nested too deeply"
    assert errors[3] == "HTTP 200 reply is JSON nested too deeply"
