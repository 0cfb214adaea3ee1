"""Asking for one item's answer: the HTTP requests and the answer's validation, on the executor's event loop.

These coroutines run on `inflight.RequestPool`'s event loop (one thread for every request in flight) and never
touch the database: they return an `Outcome` the executor's main thread stores (annotation/llm/request_claims.py).
A malformed or invalid answer is asked again with the problem stated (bounded by the endpoint's
`max_answer_retries`); the answer's confidence comes from the reply's log-probs, else from simulated annotators
(annotation/llm/simulated.py).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from annotation.llm.confidence import answer_probability, vote_share
from annotation.llm.models import LLMAnnotatorConfig
from annotation.llm.prompting import AnswerProblem, answer_from_reply, build_messages, correction_message
from annotation.llm.simulated import Example, simulated_answers
from hume.lib.http_client import ChatClient, EndpointError, ProtocolError
from tasks_app.models import Task

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What one item's requests produced; built on the requests' event loop, stored by the main thread."""

    value: Any = None
    ok: bool = False
    reasoning: str = ""
    raw_outputs: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    failure_kind: str = ""
    error: str = ""
    http_status: int | None = None
    fatal: bool = False
    confidence: float | None = None


def request_body(config: LLMAnnotatorConfig, model: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": config.temperature}
    if config.max_tokens:
        body["max_tokens"] = config.max_tokens
    if config.json_mode:
        body["response_format"] = {"type": "json_object"}
    if config.logprobs:
        body["logprobs"] = True
    return body


async def ask(client: ChatClient, config: LLMAnnotatorConfig, model: str, task: Task,
              payload: dict[str, Any], examples: list[list[Example]] | None = None, *,
              out: Outcome | None = None) -> Outcome:
    """Ask until a valid answer, re-asking with the problem stated after a malformed one (bounded); then its
    confidence: from the reply's log-probs, else from simulated annotators when `examples` holds K sets.
    Counts go into `out` as the requests are answered (safe_ask keeps them if something raises later)."""
    messages = build_messages(task, payload)
    out = Outcome() if out is None else out
    for _ in range(config.max_answer_retries + 1):
        try:
            reply = await client.complete_async(request_body(config, model, messages))
        except EndpointError as exc:
            out.attempts += exc.attempts
            out.failure_kind, out.error, out.http_status, out.fatal = exc.kind, str(exc), exc.status, exc.fatal
            out.raw_outputs.append({"error": str(exc), "status": exc.status, "body": exc.body})
            return out
        except ProtocolError as exc:
            out.attempts += exc.attempts
            out.raw_outputs.append({"content": exc.raw, "problem": str(exc)})
            out.error = str(exc)
            continue
        out.attempts += reply.attempts
        out.prompt_tokens += reply.prompt_tokens
        out.completion_tokens += reply.completion_tokens
        out.latency_ms += reply.latency_ms
        out.raw_outputs.append({"content": reply.content, "finish_reason": reply.finish_reason})
        try:
            out.value, out.reasoning = answer_from_reply(task, payload, reply.content)
        except AnswerProblem as problem:
            out.raw_outputs[-1]["problem"] = out.error = str(problem)
            messages = [*messages, {"role": "assistant", "content": reply.content}, correction_message(str(problem))]
            continue
        out.ok, out.error = True, ""
        out.confidence = answer_probability(reply.content, reply.logprobs)
        if out.confidence is None and examples:
            await add_simulated_confidence(out, client, config, model, task, payload, examples)
        return out
    out.failure_kind = "malformed"
    return out


async def add_simulated_confidence(out: Outcome, client: ChatClient, config: LLMAnnotatorConfig, model: str,
                                   task: Task, payload: dict[str, Any], examples: list[list[Example]]) -> None:
    """The share of the answers (the stored one and the simulated annotators') equal to the stored one."""
    votes = await simulated_answers(client, partial(request_body, config, model), task, payload, examples)
    out.attempts += votes.attempts
    out.prompt_tokens += votes.prompt_tokens
    out.completion_tokens += votes.completion_tokens
    out.raw_outputs.extend(votes.raw_outputs)
    out.confidence = vote_share(out.value, [out.value, *votes.answers])


async def safe_ask(*args: Any, **kwargs: Any) -> Outcome:
    """A bug in one item must not take the run down: it becomes that item's recorded failure, with the requests
    it had sent and their tokens still counted (the run's http_requests read 0 after such replies, issue 35)."""
    out = Outcome()
    try:
        return await ask(*args, out=out, **kwargs)
    except Exception as exc:  # recorded on the request row, with its type
        log.exception("LLM request failed unexpectedly")
        out.ok, out.value, out.failure_kind, out.error = False, None, "error", f"{type(exc).__name__}: {exc}"
        return out

