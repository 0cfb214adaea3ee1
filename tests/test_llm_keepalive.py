"""The LLM client keeps one connection per thread alive, and resends once on a fresh one when the server has
closed the idle connection (what servers do after their keep-alive timeout)."""
from __future__ import annotations

import json
import socket
import threading

import pytest

from hume.lib.http_client import ChatClient, EndpointError, RateLimiter

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")

REPLY = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}).encode()


class RawServer:
    """HTTP/1.1 by hand: answers each request with `REPLY`, then keeps the connection (`close_after` None) or
    closes it silently after that many replies, with no `Connection: close` to warn the client. With `together`
    = n, a reply goes out only once n requests are in flight, so n concurrent requests really overlap."""

    def __init__(self, close_after: int | None, together: int = 1) -> None:
        self.close_after = close_after
        self.together = threading.Barrier(together)  # each reply waits until this many requests have arrived
        self.connections = 0
        self.requests = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            served = 0
            while self.close_after is None or served < self.close_after:
                head = [line for line in iter(stream.readline, b"\r\n") if line]
                if not head:
                    return
                length = next(int(h.split(b":")[1]) for h in head if h.lower().startswith(b"content-length"))
                stream.read(length)
                self.requests += 1
                self.together.wait(timeout=5)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY)
                served += 1

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked in serve(), or it takes one more
        self.listener.close()


def client(server: RawServer) -> ChatClient:
    return ChatClient(server.base_url, "sk-keepalive", timeout=5, max_retries=0, limiter=RateLimiter(60_000))


BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_one_thread_sends_its_requests_over_one_connection() -> None:
    server = RawServer(close_after=None)
    try:
        chat = client(server)
        assert [chat.complete(BODY).content for _ in range(5)] == ["ok"] * 5
        assert (server.requests, server.connections) == (5, 1)
    finally:
        server.close()


def test_a_connection_the_server_closed_while_idle_is_reopened_without_a_failed_attempt() -> None:
    server = RawServer(close_after=1)
    try:
        chat = client(server)
        replies = [chat.complete(BODY) for _ in range(3)]  # max_retries=0: a failure would raise
        assert [(r.content, r.attempts) for r in replies] == [("ok", 1)] * 3
        assert (server.requests, server.connections) == (3, 3)
    finally:
        server.close()


def test_a_server_that_is_gone_is_an_endpoint_error_after_one_resend() -> None:
    server = RawServer(close_after=1)
    chat = client(server)
    assert chat.complete(BODY).content == "ok"
    server.close()  # the kept connection is closed and nothing listens any more
    with pytest.raises(EndpointError, match="cannot reach the endpoint") as failed:
        chat.complete(BODY)
    assert failed.value.attempts == 1 and server.requests == 1
