"""The event-loop transport (`aio_transport`, httptools) reads every shape of HTTP/1.1 reply a server may send:
chunked bodies, bodies that run to the close, replies over the size limit, a close in the middle of the head;
it keeps a connection only when the reply allows it, and never sends a header that could split the request."""
from __future__ import annotations

import socket

import pytest

from hume.lib.aio_transport import AsyncKeepAlive, ClosedMidReply
from tests.test_llm_async_transport import run_in_own_loop
from tests.test_llm_keepalive import RawServer

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer sk-replies"}


class ScriptedServer(RawServer):
    """Answers the n-th request on any connection with replies[n] (raw bytes), then closes that connection if
    `close_after` says so. Records what each request looked like. (`RawServer`'s listener and accept loop.)"""

    def __init__(self, replies: list[bytes], close_after: bool = False) -> None:
        self.replies, self.close_on_reply = replies, close_after
        self.received: list[bytes] = []
        super().__init__(close_after=None)
        self.url = self.base_url + "/chat/completions"

    def answer(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            while self.replies:
                head = b"".join(iter(stream.readline, b"\r\n"))
                if not head:
                    return
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length"))
                self.received.append(head + b"\r\n" + stream.read(length))
                conn.sendall(self.replies.pop(0))
                if self.close_on_reply:
                    return


def post_all(server: ScriptedServer, bodies: list[bytes], limit: int = 1000) -> list[tuple[int, dict, bytes]]:
    async def in_turn() -> list[tuple[int, dict, bytes]]:
        transport = AsyncKeepAlive(server.url, timeout=5)
        try:
            return [await transport.post(body, HEADERS, limit) for body in bodies]
        finally:
            transport.close()
    try:
        return run_in_own_loop(in_turn())
    finally:
        server.close()


def test_the_request_is_one_well_formed_head_with_the_length_of_each_body() -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server = ScriptedServer([reply, reply])
    assert post_all(server, [b'{"a": 1}', b"{}"]) == [(200, {"content-length": "2"}, b"ok")] * 2
    assert server.received == [
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + server.url.split("/")[2].encode()
        + b"\r\nContent-Length: 8\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-replies\r\n\r\n"
          b'{"a": 1}',
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + server.url.split("/")[2].encode()
        + b"\r\nContent-Length: 2\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-replies\r\n\r\n{}"]
    assert server.connections == 1


def test_a_chunked_reply_is_read_whole_and_its_connection_kept() -> None:
    reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n5\r\n\": 1}\r\n0\r\n\r\n"
    server = ScriptedServer([reply, reply])
    assert [body for _, _, body in post_all(server, [b"{}", b"{}"])] == [b'{"a": 1}'] * 2
    assert server.connections == 1


def test_a_body_that_runs_to_the_close_is_read_whole_and_the_connection_not_reused() -> None:
    reply = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 70_000  # longer than one read
    server = ScriptedServer([reply, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], close_after=True)
    replies = post_all(server, [b"{}", b"{}"], limit=100_000)
    assert [(status, len(body)) for status, _, body in replies] == [(200, 70_000), (200, 2)]
    assert server.connections == 2


def test_a_reply_over_the_limit_is_cut_at_the_limit_and_its_connection_dropped() -> None:
    big = b"HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\n\r\n" + b"e" * 5000
    server = ScriptedServer([big, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
    replies = post_all(server, [b"{}", b"{}"], limit=100)
    assert [(status, body) for status, _, body in replies] == [(500, b"e" * 100), (200, b"ok")]
    assert server.connections == 2


def test_a_close_in_the_middle_of_the_head_is_an_error_not_a_resend() -> None:
    server = ScriptedServer([b"HTTP/1.1 200 OK\r\nContent-Le"], close_after=True)
    with pytest.raises(ClosedMidReply):
        post_all(server, [b"{}"])
    assert server.connections == 1


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer a\r\nX-Injected: 1"}, {"X-Bad\n": "v"},
                                     {"Authorization": "Bearer a\0"}])
def test_a_header_that_could_split_the_request_is_refused_before_anything_is_sent(headers) -> None:
    server = ScriptedServer([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])

    async def send() -> None:
        await AsyncKeepAlive(server.url, timeout=5).post(b"{}", headers, 100)
    try:
        with pytest.raises(ValueError, match="line break or NUL"):
            run_in_own_loop(send())
        assert server.connections == 0 and server.received == []
    finally:
        server.close()


def test_the_chunk_size_line_of_a_malformed_reply_is_a_parser_error() -> None:
    from hume.lib.aio_transport import ParserError

    server = ScriptedServer([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
    with pytest.raises(ParserError):
        post_all(server, [b"{}"])

