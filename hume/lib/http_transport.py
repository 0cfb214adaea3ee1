"""POSTing to an endpoint over one kept-alive HTTP connection per thread, through the endpoint policy.

Why: a run keeps hundreds of requests in flight; with a new TCP connection per request (urllib's way) the
connects, and a server's thread or task per connection, cost more than the requests themselves: against a
local server answering in 200 ms, 256 threads reached 0.39× of the bound with a connection per request and
0.56× with kept-alive connections on the same loaded machine. Connections are opened by the endpoint
policy's connection classes, so every address is still checked when a socket connects; redirects are never
followed (http.client does not follow them: a 3xx is an error status for the caller).
"""
from __future__ import annotations

import http.client
import threading
from email.message import Message
from typing import NamedTuple
from urllib.parse import urlsplit

from hume.lib import endpoint_policy

# A kept-alive connection the server closed while idle fails on the next request before any reply: resend once.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, ConnectionAbortedError, BrokenPipeError)


class EndpointParts(NamedTuple):
    https: bool
    host: str
    port: int | None
    path: str
    authority: bytes  # the Host header


def split_endpoint(url: str) -> EndpointParts:
    """What a connection to `url` needs, for the thread transport and the event-loop one alike."""
    parts = urlsplit(url)
    return EndpointParts(parts.scheme == "https", parts.hostname or "", parts.port, parts.path or "/",
                         parts.netloc.encode("idna"))


class KeepAlive:
    """`post` on this thread's connection to `url`, opening it when needed and dropping it after any failure."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.https, self.host, self.port, self.path, _ = split_endpoint(url)
        self.timeout = timeout
        self._local = threading.local()

    def post(self, data: bytes, headers: dict[str, str], limit: int) -> tuple[int, Message, bytes]:
        """(status, headers, at most `limit` bytes of the body) whatever the status."""
        reused = getattr(self._local, "connection", None) is not None
        try:
            return self._exchange(data, headers, limit)
        except STALE:
            self.drop()
            if not reused:
                raise
        except BaseException:
            self.drop()
            raise
        try:
            return self._exchange(data, headers, limit)
        except BaseException:
            self.drop()
            raise

    def _exchange(self, data: bytes, headers: dict[str, str], limit: int) -> tuple[int, Message, bytes]:
        connection = self._connection()
        connection.request("POST", self.path, body=data, headers=headers)
        response = connection.getresponse()
        body = response.read(limit)
        if not response.isclosed():  # more than `limit` bytes: the connection cannot carry another request
            self.drop()
        return response.status, response.headers, body

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = endpoint_policy.connection(
                https=self.https, host=self.host, port=self.port, timeout=self.timeout)
        return connection

    def drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()
