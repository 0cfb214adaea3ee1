"""A real local /v1/embeddings server for the openai-backend tests: http.server in a thread on 127.0.0.1.

By default it answers every text with a fixed vector derived from the text (`vector_for`), so a test can
compute the expected similarities itself. A script of replies is served first, one per request, in order:
a 429 with Retry-After, a 500, a slow reply, vectors of the wrong size, NaN, a body quoting the key back, a
reply that trickles one byte every `trickle` seconds (each read gets a byte well within any timeout).
Every request is recorded (body and Authorization header), so tests count what the app really sent.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.json_server import JsonHandler, JsonServer

DIMENSIONS = 8


def vector_for(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).normal(size=dimensions).round(6).tolist()


@dataclass
class Reply:
    status: int = 200
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    dimensions: int = DIMENSIONS
    nan: bool = False
    reverse: bool = False  # list the vectors in reverse order, with their indexes (the protocol allows it)
    echo_authorization: bool = False
    trickle: float = 0.0  # seconds between the bytes of the (valid) reply body


def throttled(retry_after: float) -> Reply:
    return Reply(status=429, body='{"error": {"message": "rate limited"}}', headers={"Retry-After": f"{retry_after:g}"})


@dataclass
class Seen:
    body: dict[str, Any]
    authorization: str | None


class EmbeddingsServer(JsonServer):
    path = "/v1/embeddings"

    def __init__(self, script: list[Reply] | None = None) -> None:
        super().__init__()
        self.script = list(script or [])
        self.seen: list[Seen] = []

    def texts_sent(self) -> list[str]:
        return [t for s in self.seen for t in s.body.get("input", [])]

    def next_reply(self, body: dict[str, Any], authorization: str | None) -> Reply:
        with self.lock:
            self.seen.append(Seen(body, authorization))
            return self.script.pop(0) if self.script else Reply()

    def respond(self, handler: JsonHandler, body: dict[str, Any], authorization: str | None) -> None:
        reply = self.next_reply(body, authorization)
        time.sleep(reply.delay)
        if reply.echo_authorization:
            handler.send(400, json.dumps({"error": f"bad header {authorization}"}))
            return
        if reply.body is not None or reply.status != 200:
            handler.send(reply.status, reply.body or "", reply.headers)
            return
        data = []
        for index, text in enumerate(body["input"]):
            vector = vector_for(text, reply.dimensions)
            if reply.nan:
                vector[0] = float("nan")
            data.append({"object": "embedding", "index": index, "embedding": vector})
        if reply.reverse:
            data.reverse()
        payload = {"object": "list", "data": data, "model": body.get("model"), "usage": {"prompt_tokens": 1}}
        if reply.trickle:
            self.trickle(handler, json.dumps(payload).encode(), reply.trickle)
            return
        handler.send(200, json.dumps(payload))  # json writes NaN as NaN, as a broken server would

    def trickle(self, handler: JsonHandler, data: bytes, pause: float) -> None:
        """The head at once, then the body one byte at a time, until done or the client hangs up."""
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.flush()
            for byte in data:
                time.sleep(pause)
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up: what the test wants
            pass
