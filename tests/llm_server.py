"""A real local chat-completions server for the LLM tests: http.server in a thread on 127.0.0.1.

It speaks the OpenAI protocol (POST /v1/chat/completions → a chat.completion object with usage) and
answers from a script: each item's texts carry a marker such as "[m03]", and the script says, per marker,
which replies to give in order (valid, malformed JSON, out of range, 429 with Retry-After, 500, slow).
Every request is recorded, so tests can count what the app really sent.
"""
from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.json_server import JsonHandler, JsonServer

MARKER = re.compile(r"\[[a-z]+\d+\]")
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


@dataclass
class Reply:
    """One scripted reply. `answer` builds a valid JSON answer; `content` sends text as is."""

    status: int = 200
    answer: Any = None
    content: str | None = None
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    echo_authorization: bool = False  # a misbehaving server that quotes the request's key back


def valid(answer: Any) -> Reply:
    return Reply(answer=answer)


def malformed() -> Reply:
    return Reply(content='{"reasoning": "I think it is relevant", "answer": ')


def throttled(retry_after: float = 1) -> Reply:
    return Reply(status=429, body='{"error": {"message": "rate limited"}}', headers={"Retry-After": f"{retry_after:g}"})


def server_error() -> Reply:
    return Reply(status=500, body='{"error": {"message": "internal error"}}')


def slow(seconds: float, answer: Any = None) -> Reply:
    return Reply(answer=answer, delay=seconds)


@dataclass
class Seen:
    marker: str | None
    body: dict[str, Any]
    authorization: str | None
    at: float


class ChatServer(JsonServer):
    """Answers each request with the next scripted reply for its item's marker (then `answers[marker]`)."""

    path = "/v1/chat/completions"

    def __init__(self, answers: dict[str, Any] | None = None, script: dict[str, list[Reply]] | None = None,
                 answer_for: Callable[[Seen], Any] | None = None,
                 content_for: Callable[[Seen], str] | None = None,
                 answer_probability: Callable[[Seen], float] | None = None) -> None:
        super().__init__()
        self.answers = dict(answers or {})
        self.answer_for = answer_for
        self.content_for = content_for  # the whole reply text, for prompts with their own answer format
        self.script = {k: list(v) for k, v in (script or {}).items()}
        # With it, a request asking for logprobs gets OpenAI's logprobs.content: the reply's text cut into tokens,
        # the answer value one token with log(probability), every other token a log-probability of -0.5.
        self.answer_probability = answer_probability
        self.seen: list[Seen] = []
        self.on_request: Callable[[Seen], None] | None = None
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.seen)

    def counts(self) -> Counter[str | None]:
        with self.lock:
            return Counter(s.marker for s in self.seen)

    def reply_for(self, body: dict[str, Any], authorization: str | None) -> tuple[Seen, Reply]:
        item_text = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
        found = MARKER.search(item_text)
        marker = found.group(0) if found else None
        seen = Seen(marker, body, authorization, time.monotonic())
        with self.lock:
            self.seen.append(seen)
            queue = self.script.get(marker or "", [])
            reply = queue.pop(0) if queue else Reply()
        if self.on_request:
            self.on_request(seen)
        if reply.status == 200 and reply.content is None and reply.body is None and reply.answer is None:
            reply.answer = self.answer_for(seen) if self.answer_for else self.answers.get(marker or "")
        return seen, reply

    def respond(self, handler: JsonHandler, body: dict[str, Any], authorization: str | None) -> None:
        seen, reply = self.reply_for(body, authorization)
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer(handler, seen, reply, body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _answer(self, handler: JsonHandler, seen: Seen, reply: Reply, body: dict[str, Any]) -> None:
        time.sleep(reply.delay or 0.02)  # a little latency, so concurrent requests overlap as they would
        if reply.echo_authorization:
            reply.body = json.dumps({"error": f"rejected header {seen.authorization}"})
        if reply.body is not None or reply.status != 200:
            handler.send(reply.status, reply.body or "", reply.headers)
            return
        content = reply.content
        if content is None and self.content_for is not None:
            content = self.content_for(seen)
        if content is None:
            content = json.dumps({"reasoning": f"Judged {seen.marker}.", "answer": reply.answer})
        completion = {
            "id": f"chatcmpl-{len(self.seen)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": USAGE,
        }
        if body.get("logprobs") and self.answer_probability is not None:
            completion["choices"][0]["logprobs"] = {"content": token_logprobs(content, self.answer_probability(seen))}
        handler.send(200, json.dumps(completion), reply.headers)


def token_logprobs(content: str, answer_probability: float) -> list[dict[str, Any]]:
    """OpenAI's logprobs.content for `content`: 4-character tokens, the JSON value after "answer": as one token."""
    found = re.search(r'"answer"\s*:\s*', content)
    start = found.end() if found else len(content)
    end = json.JSONDecoder().raw_decode(content, start)[1] if found else start
    pieces = [(content[i:min(i + 4, start)], -0.5) for i in range(0, start, 4)]
    pieces.append((content[start:end], math.log(answer_probability)))
    pieces += [(content[i:i + 4], -0.5) for i in range(end, len(content), 4)]
    return [{"token": token, "logprob": logprob, "top_logprobs": []} for token, logprob in pieces if token]
