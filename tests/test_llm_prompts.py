"""Prompts per task kind and reading the model's reply; the HTTP client's retry rules and pacing."""
from __future__ import annotations

import email.utils
import time

import pytest

from annotation.llm.prompting import PROMPT_VERSIONS, AnswerProblem, answer_from_reply, build_messages, parse_reply
from hume.lib.http_client import ChatClient, EndpointError, ProtocolError, RateLimiter, parse_retry_after
from tasks_app.core.kinds import KINDS
from tasks_app.models import Task
from tests.kind_samples import SampleTable
from tests.llm_helpers import make_task
from tests.llm_server import ChatServer, Reply, server_error, throttled

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")  # the fake LLM servers listen on 127.0.0.1


def test_every_task_kind_has_a_versioned_prompt() -> None:
    assert set(PROMPT_VERSIONS) == set(KINDS)
    assert all(version.startswith(f"{kind}-v") for kind, version in PROMPT_VERSIONS.items())


@pytest.mark.parametrize("content, expected", [
    ('{"reasoning": "close", "answer": 3.5}', ("close", 3.5)),
    ('```json\n{"reasoning": "r", "answer": {"c1": 1}}\n```', ("r", {"c1": 1})),
    ('Sure! Here is my judgement: {"reasoning": "r", "answer": "positive"} Hope it helps.', ("r", "positive")),
    ('{"answer": 2}', ("", 2)),
])
def test_a_reply_is_read_as_reasoning_then_answer(content: str, expected: tuple) -> None:
    assert parse_reply(content) == expected


@pytest.mark.parametrize("content, problem", [
    ('{"reasoning": "r", "answer": ', "not a JSON object"),
    ("[1, 2]", "not a JSON object"),
    ('{"reasoning": "r", "score": 7}', 'no "answer" field'),
])
def test_an_unusable_reply_says_what_is_wrong(content: str, problem: str) -> None:
    with pytest.raises(AnswerProblem, match=problem):
        parse_reply(content)


@pytest.mark.django_db
def test_each_kind_prompt_shows_the_instructions_the_item_and_the_answer_shape() -> None:
    expectations = SampleTable("prompt_needles")  # each kind's own (its samples.py), where it has LLM samples
    for kind, needles in expectations.items():
        task, items, _ = make_task(kind, 1, name=f"prompt {kind}")
        system, user = build_messages(task, items[0].payload)
        assert system["role"] == "system" and user["role"] == "user"
        text = system["content"] + user["content"]
        assert "INSTRUCTION-MARK-7731" in system["content"] and "reasoning FIRST" in system["content"]
        assert all(needle in text for needle in needles), kind


def test_answers_go_through_the_kinds_own_validation() -> None:
    task = Task(name="t", kind="sts", language="eng-Latn")
    payload = {"sentence1": "a", "sentence2": "b"}
    assert answer_from_reply(task, payload, '{"reasoning": "", "answer": 4.5}') == (4.5, "")
    with pytest.raises(AnswerProblem, match="answer: 4.3 is not on the scale's step of 0.5"):
        answer_from_reply(task, payload, '{"reasoning": "", "answer": 4.3}')
    with pytest.raises(AnswerProblem, match="outside the scale 0–5"):
        answer_from_reply(task, payload, '{"reasoning": "", "answer": 6}')


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    assert parse_retry_after("7") == 7.0
    now = time.time()
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_the_rate_limiter_spaces_request_starts_and_holds_everyone_after_a_429() -> None:
    clock = [100.0]
    slept: list[float] = []
    limiter = RateLimiter(120, clock=lambda: clock[0], sleep=slept.append)
    for _ in range(3):
        limiter.acquire()
    assert slept == [0.5, 1.0]
    limiter.hold(10)
    limiter.acquire()
    assert slept[-1] == 10.0


def client(server: ChatServer, **kwargs) -> ChatClient:
    options = {"timeout": 2.0, "max_retries": 2, "limiter": RateLimiter(6000), "backoff_base": 0.01}
    return ChatClient(server.base_url, "sk-client-1", **{**options, **kwargs})


def test_the_client_sends_a_bearer_key_and_reads_content_and_usage() -> None:
    with ChatServer({"[m01]": 3}) as server:
        reply = client(server).complete({"model": "m", "messages": [{"role": "user", "content": "[m01]"}]})
    assert reply.content == '{"reasoning": "Judged [m01].", "answer": 3}'
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts) == (100, 20, 1)
    assert server.seen[0].authorization == "Bearer sk-client-1"


def test_the_client_gives_up_after_its_retries_and_never_retries_a_refused_key() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "[m01]"}]}
    with ChatServer(script={"[m01]": [server_error()] * 5}) as server, pytest.raises(EndpointError) as failed:
        client(server).complete(body)
    assert (failed.value.status, failed.value.attempts, server.count) == (500, 3, 3)
    with ChatServer(script={"[m01]": [Reply(status=401, body="no")]}) as server, pytest.raises(EndpointError) as no:
        client(server).complete(body)
    assert no.value.fatal and server.count == 1
    with ChatServer(script={"[m01]": [throttled(900)]}) as server, pytest.raises(EndpointError) as long_wait:
        client(server).complete(body)
    assert long_wait.value.status == 429 and server.count == 1  # a wait beyond 5 minutes is not waited out


def test_the_client_refuses_redirects_and_non_chat_replies() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "[m01]"}]}
    redirect = Reply(status=307, body="", headers={"Location": "http://127.0.0.1:9/steal"})
    with ChatServer(script={"[m01]": [redirect]}) as server, pytest.raises(EndpointError) as failed:
        client(server).complete(body)
    assert failed.value.status == 307 and server.count == 1
    with ChatServer(script={"[m01]": [Reply(body='{"ok": true}')]}) as server, pytest.raises(ProtocolError):
        client(server).complete(body)
