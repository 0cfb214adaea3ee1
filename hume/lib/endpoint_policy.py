"""Where the app may send requests on an admin's say-so: the one policy for LLM and embedding endpoints.

An endpoint URL is typed by an admin, but the request is sent by the server, from inside its network: left
unchecked, `http://169.254.169.254/` reads cloud credentials and `http://127.0.0.1:6379/` talks to Redis
(server-side request forgery). So:

- `check_url(url)` refuses, when an endpoint is saved, a URL that is not plain http(s), carries credentials,
  a query, a fragment, spaces or control characters, or whose host resolves to an address that is not
  public (loopback, private, link-local, shared, reserved, multicast, unspecified — in any spelling:
  `localhost`, `0.0.0.0`, `2130706433`, `[::1]`, `::ffff:127.0.0.1`). A host that does not resolve at save
  time is accepted: the connect-time check below still guards it.
- `opener(...)` (urllib), `connection(...)` (http.client) and `guarded_stream(...)` (asyncio) open
  connections that resolve the host themselves and connect only to an address that passes the same test, so
  a name that resolved to a public address when saved and to
  127.0.0.1 later (DNS rebinding) is still refused.

Networks listed in settings.ENDPOINT_ALLOWED_NETWORKS are allowed, e.g. "127.0.0.0/8" for a local inference
server; nothing is allowed by default.
"""
from __future__ import annotations

import asyncio
import http.client
import ipaddress
import socket
import ssl
import unicodedata
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EndpointRefused(OSError):
    """The URL or the address it leads to is not allowed. An OSError, so urllib reports it as a failed
    connection (URLError.reason) and callers can tell it from other failures by its type."""


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in getattr(settings, "ENDPOINT_ALLOWED_NETWORKS", [])]


def check_address(address: str) -> IPAddress:
    """The address, if a request may go there; EndpointRefused otherwise."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in allowed_networks()):
        return ip
    if not ip.is_global or ip.is_multicast:
        raise EndpointRefused(
            f"{ip}, which is a loopback, private, link-local or reserved address: requests may only go to "
            "public addresses (an administrator can allow a local server with ENDPOINT_ALLOWED_NETWORKS)")
    return ip


def resolve(host: str, port: int | None) -> list[str]:
    """Every address the host name resolves to (numeric forms such as 2130706433 included)."""
    infos = socket.getaddrinfo(host, port or 80, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def check_url(url: str) -> None:
    """Raise EndpointRefused with a message for the admin when `url` may not be used as an endpoint."""
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url):
        raise EndpointRefused("The endpoint URL must not contain spaces or control characters.")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise EndpointRefused("The endpoint URL must start with http:// or https://.")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise EndpointRefused("The endpoint URL has an invalid port.") from None
    if not host:
        raise EndpointRefused("The endpoint URL needs a host, e.g. https://api.openai.com/v1.")
    if parts.username or parts.password:
        raise EndpointRefused("Do not put credentials in the URL; use an API key environment variable.")
    if parts.query or parts.fragment:
        raise EndpointRefused("The endpoint URL must not have a query string or fragment.")
    try:
        addresses = resolve(host, port)
    except (socket.gaierror, UnicodeError):
        return  # cannot tell now; the connect-time check decides
    for address in addresses:
        try:
            check_address(address)
        except EndpointRefused as exc:
            raise EndpointRefused(f"The endpoint host {host} leads to {exc}.") from None


def guarded_connection(address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,
                       source_address: tuple[str, int] | None = None) -> socket.socket:
    """socket.create_connection, but only to addresses the policy allows, checked on the resolved address
    the socket really connects to."""
    host, port = address
    error: OSError | None = None
    for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        try:
            check_address(sockaddr[0])
        except EndpointRefused as exc:
            raise EndpointRefused(f"refused to connect to {host}: it leads to {exc}") from None
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError(f"{host} did not resolve")


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = guarded_connection  # http.client's own hook for opening the socket


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = guarded_connection


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_HTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_HTTPSConnection, req, context=self._context)


def opener(*handlers: urllib.request.BaseHandler) -> urllib.request.OpenerDirector:
    """A urllib opener that connects only where the policy allows (proxies from the environment are not
    used: the policy must see the address of the endpoint itself)."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _HTTPHandler(), _HTTPSHandler(), *handlers)


def connection(*, https: bool, host: str, port: int | None, timeout: float) -> http.client.HTTPConnection:
    """An http.client connection that connects only where the policy allows (kept alive by its caller)."""
    return (_HTTPSConnection if https else _HTTPConnection)(host, port, timeout=timeout)


async def guarded_stream(*, https: bool, host: str, port: int | None,
                         timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """`guarded_connection` for asyncio: resolve once, check every address, connect to the checked address
    itself (never to the name again, so a second resolution cannot lead elsewhere), with the name as TLS SNI
    and certificate host."""
    loop = asyncio.get_running_loop()
    port = port or (443 if https else 80)
    infos = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout)
    error: OSError | None = None
    for _, _, _, _, sockaddr in infos:
        try:
            check_address(sockaddr[0])
        except EndpointRefused as exc:
            raise EndpointRefused(f"refused to connect to {host}: it leads to {exc}") from None
        try:
            return await asyncio.wait_for(asyncio.open_connection(
                sockaddr[0], sockaddr[1], ssl=ssl.create_default_context() if https else None,
                server_hostname=host if https else None), timeout)
        except OSError as exc:  # TimeoutError included: try the next address
            error = exc
    raise error or OSError(f"{host} did not resolve")
