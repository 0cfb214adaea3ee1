"""POSTing to an endpoint from one asyncio event loop over kept-alive connections, through the endpoint policy.

Why: a run keeps hundreds of requests in flight. With a thread per request (`transport.KeepAlive`), 256 threads
on a 2-core machine spent their time competing for the GIL, with each other and with the executor's loop that
claims and stores: against a local server answering in 200 ms they reached 0.60× of the bound with no database
at all. One event loop carries every request of a run instead. Connections are opened by
`endpoint_policy.guarded_stream` (the address checked, then connected to, at every connect), kept alive and
reused; a reused one the server closed while idle is resent once on a fresh connection, as `KeepAlive` does.
HTTP/1.1 is spoken by h11; redirects are never followed (a 3xx is an error status for the caller).
"""
from __future__ import annotations

import asyncio
from collections import deque

import h11

from annotation.llm import endpoint_policy
from annotation.llm.transport import split_endpoint


class ClosedBeforeReply(ConnectionError):
    """The server closed the connection before any reply to this request."""


# A kept-alive connection the server closed while idle fails before any reply: resend once on a fresh one.
STALE = (ClosedBeforeReply, ConnectionResetError, ConnectionAbortedError, BrokenPipeError)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.protocol = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        self.writer.close()


class AsyncKeepAlive:
    """`post` over an idle connection to `url` when there is one, a new one otherwise; for one event loop."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.https, self.host, self.port, self.path, self.authority = split_endpoint(url)
        self.timeout = timeout
        self._idle: deque[_Connection] = deque()

    async def post(self, data: bytes, headers: dict[str, str], limit: int) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, at most `limit` bytes of the body) whatever the status."""
        if self._idle:
            try:
                return await self._exchange(self._idle.pop(), data, headers, limit)
            except STALE:
                pass
        async with asyncio.timeout(self.timeout):
            reader, writer = await endpoint_policy.guarded_stream(
                https=self.https, host=self.host, port=self.port, timeout=self.timeout)
        return await self._exchange(_Connection(reader, writer), data, headers, limit)

    async def _exchange(self, connection: _Connection, data: bytes, headers: dict[str, str],
                        limit: int) -> tuple[int, dict[str, str], bytes]:
        try:
            async with asyncio.timeout(self.timeout):
                reply, reusable = await self._round_trip(connection, data, headers, limit)
        except BaseException:
            connection.close()
            raise
        if reusable:
            self._idle.append(connection)
        else:
            connection.close()
        return reply

    async def _round_trip(self, connection: _Connection, data: bytes, headers: dict[str, str],
                          limit: int) -> tuple[tuple[int, dict[str, str], bytes], bool]:
        protocol = connection.protocol
        request = h11.Request(method="POST", target=self.path.encode(), headers=[
            ("Host", self.authority), ("Content-Length", str(len(data))), *headers.items()])
        connection.writer.write(protocol.send(request) + protocol.send(h11.Data(data=data))
                                + protocol.send(h11.EndOfMessage()))
        await connection.writer.drain()
        status: int | None = None
        reply_headers: dict[str, str] = {}
        body = bytearray()
        while True:
            event = protocol.next_event()
            if event is h11.NEED_DATA:
                chunk = await connection.reader.read(65536)
                if not chunk and status is None:
                    raise ClosedBeforeReply("the server closed the connection before replying")
                protocol.receive_data(chunk)
            elif isinstance(event, h11.Response):
                status = event.status_code
                reply_headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in event.headers}
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > limit:  # the rest is never read: the connection cannot carry another request
                    return (status or 0, reply_headers, bytes(body[:limit])), False
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
        reusable = protocol.our_state is h11.DONE and protocol.their_state is h11.DONE
        if reusable:
            protocol.start_next_cycle()
        return (status or 0, reply_headers, bytes(body)), reusable

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()
