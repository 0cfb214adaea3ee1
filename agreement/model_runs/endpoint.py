"""The `openai` backend's HTTP side: POST <base_url>/embeddings in batches.

It reuses the LLM annotators' client (hume/lib/http_client.py): the same retry budget with exponential
backoff on 429/5xx/timeouts, Retry-After honoured, redirects refused, and the key only ever in the
Authorization header and scrubbed from any text that comes back. What differs is the reply: a list of
vectors, checked here (count, order, size, finite values) before anything is cached.

Each request goes through the event-loop transport LLM runs use (hume/lib/aio_transport.py), whose
timeout bounds the whole exchange (connect, head and body), not each read: a server trickling a byte every
few seconds is cut off at the model's timeout and retried like any timeout, so one request lasts at most
about (max_retries + 1) × timeout plus the backoff (issue 23, item 3). Any reply that does not parse, JSON
nested too deeply included, is a ProtocolError: the run fails with that reason.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from hume.lib.http_client import ChatClient, ProtocolError, RateLimiter


class BadVectors(ValueError):
    """The endpoint answered, but not with one finite vector of the expected size per text."""


class EmbeddingsClient(ChatClient):
    """ChatClient's transport and retries, pointed at /embeddings, returning the parsed payload."""

    def __init__(self, base_url: str, api_key: str | None, **kwargs: Any) -> None:
        super().__init__(base_url, api_key, **kwargs)
        self.url = base_url.rstrip("/") + "/embeddings"

    def __repr__(self) -> str:
        return f"EmbeddingsClient({self.url!r})"

    def complete(self, body: dict[str, Any]) -> Any:  # type: ignore[override]
        """One request with retries, each try bounded as a whole by the timeout (the module docstring)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: no event loop in this thread
            return asyncio.run(self._complete_bounded(body))
        # Called from inside a running event loop (an async caller, a notebook): a thread of its own runs it.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self._complete_bounded(body)).result()

    async def _complete_bounded(self, body: dict[str, Any]) -> Any:
        try:
            return await self.complete_async(body)
        finally:
            self.close_async()  # its connections belong to this event loop, which ends here

    def _reply(self, status: int, text: str, attempts: int, latency_ms: int) -> Any:  # type: ignore[override]
        try:
            return json.loads(self.redact(text))
        except ValueError:
            raise ProtocolError(f"HTTP {status} reply is not JSON", self.redact(text)[:2000], attempts) from None
        except RecursionError:
            raise ProtocolError(f"HTTP {status} reply is JSON nested too deeply", self.redact(text)[:200],
                                attempts) from None


def make_client(base_url: str, api_key: str | None, *, timeout: float, max_retries: int,
                requests_per_minute: int = 600) -> EmbeddingsClient:
    return EmbeddingsClient(base_url, api_key, timeout=timeout, max_retries=max_retries,
                            limiter=RateLimiter(requests_per_minute))


def vectors_of(payload: Any, n: int, dimensions: int | None) -> np.ndarray:
    """The reply's vectors in input order, as float32 (n, d); BadVectors when any is missing or unusable."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or len(data) != n:
        got = len(data) if isinstance(data, list) else "no"
        raise BadVectors(f"the endpoint returned {got} vectors for {n} texts")
    rows: list[Any] = [None] * n
    for position, entry in enumerate(data):
        index = entry.get("index", position) if isinstance(entry, dict) else None
        vector = entry.get("embedding") if isinstance(entry, dict) else None
        if not isinstance(index, int) or not 0 <= index < n or rows[index] is not None or not isinstance(vector, list):
            raise BadVectors(f"data[{position}] is not an embedding with a fresh index below {n}")
        rows[index] = vector
    sizes = {len(v) for v in rows}
    if len(sizes) != 1 or 0 in sizes:
        raise BadVectors(f"the endpoint returned vectors of different sizes: {sorted(sizes)}")
    size = sizes.pop()
    if dimensions is not None and size != dimensions:
        raise BadVectors(f"the endpoint returned vectors of size {size}; this model's vectors have size {dimensions}")
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        raise BadVectors("the endpoint returned non-numeric vector values") from None
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise BadVectors(f"the endpoint returned NaN or infinite values for text {int(np.flatnonzero(bad)[0])}")
    return matrix


def embed_batches(client: EmbeddingsClient, model_id: str, texts: Sequence[str], batch_size: int,
                  dimensions: int | None) -> np.ndarray:
    """All texts' vectors, one request per batch; every batch must agree with the expected size."""
    parts = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start:start + batch_size])
        payload = client.complete({"model": model_id, "input": batch, "encoding_format": "float"})
        part = vectors_of(payload, len(batch), dimensions)
        dimensions = part.shape[1]
        parts.append(part)
    return np.concatenate(parts) if parts else np.zeros((0, dimensions or 0), dtype=np.float32)
