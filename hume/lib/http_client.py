"""A small client for OpenAI-compatible chat-completions endpoints (OpenAI, vLLM, llama.cpp, ...).

No SDK: http.client with one kept-alive connection per thread (`http_transport`) for `complete`, and httptools on
one asyncio event loop (`aio_transport`) for `complete_async`, which a run's executor uses to keep hundreds of
requests in flight. The client owns the HTTP side of a run:
pacing to the configured requests per minute, bounded retries with exponential backoff on 429, 5xx,
timeouts and refused connections, and honouring Retry-After. It never logs or returns the API key: the
key travels only in the Authorization header (not forwarded on redirects, which are refused anyway) and
any text coming back is scrubbed of it before the caller sees it.
"""
from __future__ import annotations

import asyncio
import email.utils
import http.client
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hume.lib import endpoint_policy
from hume.lib.aio_transport import AsyncKeepAlive, ParserError
from hume.lib.http_transport import KeepAlive

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
FATAL_STATUS = {401, 403, 404}  # the configuration is wrong: every further request would fail the same way
MAX_RETRY_AFTER_SECONDS = 300.0
REDACTED = "[redacted]"
MAX_REPLY_BYTES = 4 * 1024 * 1024  # a chat completion is a few kB; an endless reply must not fill the worker
EXCERPT_CHARS = 1000  # what is kept of a reply that failed (it may come from anywhere: keep little)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of a failed reply, labelled as an excerpt when it was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [excerpt: the first {limit} of {len(text)} characters of the endpoint's reply]"


class EndpointError(Exception):
    """The endpoint did not give a usable reply within the retry budget.

    kind: "http" (an error status or a refused connection) or "timeout"; fatal: the run should stop
    (bad key, unknown model or URL) rather than fail item after item.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, attempts: int = 1,
                 fatal: bool = False, body: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.fatal = fatal
        self.body = body
        self.retry_after = retry_after


class ProtocolError(ValueError):
    """A 200 reply that is not a chat completion (no choices[0].message.content)."""

    def __init__(self, message: str, raw: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts


@dataclass(frozen=True)
class ChatReply:
    content: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    latency_ms: int
    finish_reason: str | None
    logprobs: list[tuple[str, float]] | None = None  # (token, log-probability) of each generated token, if sent


class RateLimiter:
    """Spaces request starts evenly at `rpm` per minute, shared by all threads of one run.

    `hold` pushes every thread back after a 429 with Retry-After: the server spoke for the whole key,
    not just for the request that got the answer.
    """

    def __init__(self, rpm: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 60.0 / max(1, rpm)
        self.clock, self.sleep = clock, sleep
        self._lock = threading.Lock()
        self._next_at = 0.0
        self._hold_until = 0.0

    def acquire(self) -> None:
        if (delay := self.reserve()) > 0:
            self.sleep(delay)

    def reserve(self) -> float:
        """Book the next start: seconds to wait before it (an event loop waits them with asyncio.sleep)."""
        with self._lock:
            now = self.clock()
            start = max(now, self._next_at, self._hold_until)
            self._next_at = start + self.interval
        return start - now

    def hold(self, seconds: float) -> None:
        with self._lock:
            self._hold_until = max(self._hold_until, self.clock() + seconds)




def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds (RFC 9110: delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ChatClient:
    """POST <base_url>/chat/completions with retries; one instance per run, shared by its threads."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout: float, max_retries: int,
                 limiter: RateLimiter, backoff_base: float = 0.5, backoff_cap: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep, budget: Any = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.budget = budget  # the endpoint's spend cap (annotation/llm/spend.py): one request taken per try
        self._api_key = api_key
        self.timeout, self.max_retries = timeout, max_retries
        self.limiter = limiter
        self.backoff_base, self.backoff_cap = backoff_base, backoff_cap
        self.sleep = sleep
        self._transport: KeepAlive | None = None
        self._async_transport: AsyncKeepAlive | None = None

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r})"

    def redact(self, text: str) -> str:
        """Remove the key from any text a server sent back (a misbehaving proxy may echo headers)."""
        return text.replace(self._api_key, REDACTED) if self._api_key and text else text

    def complete(self, body: dict[str, Any]) -> ChatReply:
        """Send one chat completion, retrying transient failures; raise EndpointError when out of tries."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            if self.budget is not None:
                self._take_from_budget(attempt)
            self.limiter.acquire()
            started = time.monotonic()
            try:
                status, text = self._post(data)
            except EndpointError as exc:
                self.sleep(self._failed(exc, attempt))
                continue
            latency_ms = int((time.monotonic() - started) * 1000)
            return self._reply(status, text, attempt, latency_ms)

    async def complete_async(self, body: dict[str, Any]) -> ChatReply:
        """`complete` on the running event loop: the same retries, pacing and errors, waits that do not block."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            if self.budget is not None:
                await asyncio.to_thread(self._take_from_budget, attempt)  # a database write: not on the loop
            if (delay := self.limiter.reserve()) > 0:
                await asyncio.sleep(delay)
            started = time.monotonic()
            try:
                status, text = await self._post_async(data)
            except EndpointError as exc:
                await asyncio.sleep(self._failed(exc, attempt))
                continue
            latency_ms = int((time.monotonic() - started) * 1000)
            return self._reply(status, text, attempt, latency_ms)

    def _take_from_budget(self, attempt: int) -> None:
        """Take this try from the spend cap; out of budget, stop here, with the tries actually sent."""
        try:
            self.budget.take()
        except EndpointError as exc:
            exc.attempts = attempt - 1
            raise

    def _failed(self, exc: EndpointError, attempt: int) -> float:
        """Seconds to wait before retrying after `exc`; re-raises it when there is no retry left."""
        exc.attempts = attempt
        delay = self._retry_delay(exc, attempt)
        if delay is None:
            raise exc
        log.warning("LLM endpoint %s: %s; retry %d/%d in %.1fs", self.url, exc, attempt, self.max_retries, delay)
        return delay

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _post(self, data: bytes) -> tuple[int, str]:
        if self._transport is None or self._transport.url != self.url:  # a subclass may point `url` elsewhere
            self._transport = KeepAlive(self.url, self.timeout)
        try:
            status, reply_headers, raw = self._transport.post(data, self._headers(), MAX_REPLY_BYTES)
        except Exception as exc:
            raise self._unreachable(exc) from None
        return self._checked(status, reply_headers, raw)

    async def _post_async(self, data: bytes) -> tuple[int, str]:
        if self._async_transport is None or self._async_transport.url != self.url:
            self._async_transport = AsyncKeepAlive(self.url, self.timeout)
        try:
            status, reply_headers, raw = await self._async_transport.post(data, self._headers(), MAX_REPLY_BYTES)
        except Exception as exc:
            raise self._unreachable(exc) from None
        return self._checked(status, reply_headers, raw)

    def close_async(self) -> None:
        """Close the idle connections of `complete_async`, on its event loop before that loop ends."""
        if self._async_transport is not None:
            self._async_transport.close()

    def _unreachable(self, exc: Exception) -> Exception:
        """What a transport's exception means for the caller: an EndpointError, or itself when it is a bug."""
        if isinstance(exc, TimeoutError):
            return EndpointError(f"no reply within {self.timeout:g}s", kind="timeout")
        if isinstance(exc, endpoint_policy.EndpointRefused):
            return EndpointError(str(exc), kind="http", fatal=True)
        if isinstance(exc, (OSError, http.client.HTTPException, ParserError)):
            return EndpointError(f"cannot reach the endpoint: {exc or type(exc).__name__}", kind="http")
        return exc

    def _checked(self, status: int, reply_headers: Mapping[str, str], raw: bytes) -> tuple[int, str]:
        """The reply's text when its status is a success; an EndpointError with a bounded excerpt otherwise."""
        text = raw.decode("utf-8", errors="replace")
        if not 200 <= status < 300:  # a redirect too: it would re-send the prompt somewhere else
            # A Message (http.client) matches any case; the event-loop transport gives lower-case names.
            retry_after = parse_retry_after(reply_headers.get("retry-after"))
            raise EndpointError(f"HTTP {status} from the endpoint", kind="http", status=status,
                                fatal=status in FATAL_STATUS, body=excerpt(self.redact(text)), retry_after=retry_after)
        return status, text

    def _retry_delay(self, exc: EndpointError, attempt: int) -> float | None:
        """Seconds to wait before the next try, or None to give up (fatal, not retryable, out of tries)."""
        retryable = exc.kind == "timeout" or exc.status is None or exc.status in RETRYABLE_STATUS \
            or (exc.status or 0) >= 500
        if exc.fatal or not retryable or attempt > self.max_retries:
            return None
        retry_after = exc.retry_after
        if retry_after is not None:
            if retry_after > MAX_RETRY_AFTER_SECONDS:
                return None
            self.limiter.hold(retry_after)
            return retry_after
        backoff = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
        return backoff * (0.5 + random.random() / 2)

    def _reply(self, status: int, text: str, attempts: int, latency_ms: int) -> ChatReply:
        text = self.redact(text)
        try:
            payload = json.loads(text)
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except RecursionError:  # the request was sent (and paid for): it is counted with the others
            raise ProtocolError(f"HTTP {status} reply is JSON nested too deeply", excerpt(text), attempts) from None
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProtocolError(f"HTTP {status} reply is not a chat completion", excerpt(text), attempts) from None
        if not isinstance(content, str):
            raise ProtocolError("the reply has no text content", excerpt(text), attempts)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return ChatReply(
            content=content,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            attempts=attempts,
            latency_ms=latency_ms,
            finish_reason=choice.get("finish_reason"),
            logprobs=_token_logprobs(choice.get("logprobs")),
        )


def _token_logprobs(block: Any) -> list[tuple[str, float]] | None:
    """The (token, logprob) pairs of a choice's `logprobs.content` (OpenAI's format), or None when absent or
    not in that shape (a server may send something else: the answer then simply has no log-prob confidence)."""
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list) or not content:
        return None
    pairs = []
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        logprob = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, int | float):
            return None
        pairs.append((token, float(logprob)))
    return pairs


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
