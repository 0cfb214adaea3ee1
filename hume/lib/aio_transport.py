"""POSTing to an endpoint from one asyncio event loop over kept-alive connections, through the endpoint policy.

Why: a run keeps hundreds of requests in flight. With a thread per request (`http_transport.KeepAlive`), 256 threads
on a 2-core machine spent their time competing for the GIL, with each other and with the executor's loop that
claims and stores: against a local server answering in 200 ms they reached 0.60× of the bound with no database
at all. One event loop carries every request of a run instead. Connections are opened by
`endpoint_policy.guarded_stream` (the address checked, then connected to, at every connect), kept alive and
reused; a reused one the server closed while idle is resent once on a fresh connection, as `KeepAlive` does.

Replies are parsed by httptools (llhttp, the parser of Node.js and uvicorn, in C). The request head is written
here: it is one fixed block per endpoint and header set, checked once for characters that could split it, and
only its Content-Length changes. With h11 (pure Python) building and validating every request and parsing every
reply, the HTTP side alone took a third of the event loop's time at 256 in flight. Redirects are never followed
(a 3xx is an error status for the caller).
"""
from __future__ import annotations

import asyncio
from collections import deque

import httptools

from hume.lib import endpoint_policy
from hume.lib.http_transport import split_endpoint

ParserError = httptools.HttpParserError


class ClosedBeforeReply(ConnectionError):
    """The server closed the connection before any reply to this request."""


class ClosedMidReply(ConnectionError):
    """The server closed the connection in the middle of the head of its reply."""


# A kept-alive connection the server closed while idle fails before any reply: resend once on a fresh one.
STALE = (ClosedBeforeReply, ConnectionResetError, ConnectionAbortedError, BrokenPipeError)

FORBIDDEN_IN_HEAD = ("\r", "\n", "\0")


class _Reply:
    """httptools' callbacks for one response: its headers (names lower-cased) and at most `limit` bytes of body."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.started = self.head_done = self.complete = self.too_long = self.keep_alive = False
        self.parser = httptools.HttpResponseParser(self)

    def on_message_begin(self) -> None:
        self.started = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.head_done = True
        self.keep_alive = self.parser.should_keep_alive()  # llhttp forgets it once the message is complete

    def on_body(self, chunk: bytes) -> None:
        self.body += chunk
        self.too_long = len(self.body) > self.limit

    def on_message_complete(self) -> None:
        self.complete = True


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.writer.close()


class AsyncKeepAlive:
    """`post` over an idle connection to `url` when there is one, a new one otherwise; for one event loop."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.https, self.host, self.port, self.path, self.authority = split_endpoint(url)
        self.timeout = timeout
        self._idle: deque[_Connection] = deque()
        self._heads: dict[tuple[tuple[str, str], ...], tuple[bytes, bytes]] = {}

    async def post(self, data: bytes, headers: dict[str, str], limit: int) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, at most `limit` bytes of the body) whatever the status."""
        request = self._request(data, headers)
        if self._idle:
            try:
                return await self._exchange(self._idle.pop(), request, limit)
            except STALE:
                pass
        async with asyncio.timeout(self.timeout):
            reader, writer = await endpoint_policy.guarded_stream(
                https=self.https, host=self.host, port=self.port, timeout=self.timeout)
        return await self._exchange(_Connection(reader, writer), request, limit)

    def _request(self, data: bytes, headers: dict[str, str]) -> bytes:
        """The request's bytes: the head for these headers (built and checked once) around its Content-Length."""
        key = tuple(headers.items())
        if (head := self._heads.get(key)) is None:
            for name, value in key:
                if any(c in name or c in value for c in FORBIDDEN_IN_HEAD) or ":" in name or not name.strip():
                    raise ValueError(f"header {name!r} cannot be sent: a name or value with a line break or NUL")
            fields = "".join(f"{name}: {value}\r\n" for name, value in key)
            head = (b"POST " + self.path.encode("ascii") + b" HTTP/1.1\r\nHost: " + self.authority
                    + b"\r\nContent-Length: ", b"\r\n" + fields.encode("latin-1") + b"\r\n")
            self._heads[key] = head
        return head[0] + str(len(data)).encode("ascii") + head[1] + data

    async def _exchange(self, connection: _Connection, request: bytes,
                        limit: int) -> tuple[int, dict[str, str], bytes]:
        try:
            async with asyncio.timeout(self.timeout):
                reply, reusable = await self._round_trip(connection, request, limit)
        except BaseException:
            connection.close()
            raise
        if reusable:
            self._idle.append(connection)
        else:
            connection.close()
        return reply

    @staticmethod
    async def _round_trip(connection: _Connection, request: bytes,
                          limit: int) -> tuple[tuple[int, dict[str, str], bytes], bool]:
        connection.writer.write(request)
        await connection.writer.drain()
        reply = _Reply(limit)
        parser = reply.parser
        while not reply.complete:
            chunk = await connection.reader.read(65536)
            if not chunk:  # closed: before the reply, within its head, or ending a body that runs to the close
                if not reply.started:
                    raise ClosedBeforeReply("the server closed the connection before replying")
                if not reply.head_done:
                    raise ClosedMidReply("the server closed the connection in the middle of its reply")
                break
            parser.feed_data(chunk)
            if reply.too_long:  # the rest is never read: the connection cannot carry another request
                return (parser.get_status_code(), reply.headers, bytes(reply.body[:limit])), False
        reusable = reply.complete and reply.keep_alive
        return (parser.get_status_code(), reply.headers, bytes(reply.body)), reusable

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()
