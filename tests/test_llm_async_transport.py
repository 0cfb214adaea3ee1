"""The event-loop client of a run (`complete_async`) keeps connections alive as the thread client does: many
requests in flight share a few connections, a connection the server closed while idle is reopened without a
failed attempt, a server that is gone is an EndpointError, and the endpoint policy is checked at connect."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from hume.lib.http_client import ChatClient, EndpointError, RateLimiter
from tests.test_llm_keepalive import BODY, RawServer, client

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")


def run_in_own_loop(coroutine):
    """Run `coroutine` on a fresh event loop in a thread of its own, as a run's request pool does: in the whole
    suite, Playwright's sync API keeps an event loop running in the main thread, where `asyncio.run` refuses."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


async def in_turn(chat: ChatClient, times: int) -> list[tuple[str, int]]:
    try:
        return [((reply := await chat.complete_async(BODY)).content, reply.attempts) for _ in range(times)]
    finally:
        chat.close_async()


def test_requests_in_turn_share_one_connection() -> None:
    server = RawServer(close_after=None)
    try:
        assert run_in_own_loop(in_turn(client(server), 5)) == [("ok", 1)] * 5
        assert (server.requests, server.connections) == (5, 1)
    finally:
        server.close()


def test_requests_in_flight_together_open_a_connection_each_and_reuse_them() -> None:
    server = RawServer(close_after=None, together=4)  # no reply before all four are in flight
    chat = client(server)

    async def waves() -> list[str]:
        try:
            replies = []
            for _ in range(3):
                replies += await asyncio.gather(*(chat.complete_async(BODY) for _ in range(4)))
            return [reply.content for reply in replies]
        finally:
            chat.close_async()
    try:
        assert run_in_own_loop(waves()) == ["ok"] * 12
        assert server.requests == 12 and server.connections == 4
    finally:
        server.close()


def test_a_connection_the_server_closed_while_idle_is_reopened_without_a_failed_attempt() -> None:
    server = RawServer(close_after=1)
    try:
        assert run_in_own_loop(in_turn(client(server), 3)) == [("ok", 1)] * 3  # max_retries=0: a failure would raise
        assert (server.requests, server.connections) == (3, 3)
    finally:
        server.close()


def test_a_server_that_is_gone_is_an_endpoint_error_after_one_resend() -> None:
    server = RawServer(close_after=1)
    chat = client(server)

    async def then_gone() -> None:
        try:
            assert (await chat.complete_async(BODY)).content == "ok"
            server.close()
            await chat.complete_async(BODY)
        finally:
            chat.close_async()
    with pytest.raises(EndpointError, match="cannot reach the endpoint") as failed:
        run_in_own_loop(then_gone())
    assert failed.value.attempts == 1 and server.requests == 1


def test_the_connection_is_checked_against_the_policy_when_it_is_made(settings) -> None:
    server = RawServer(close_after=None)
    settings.ENDPOINT_ALLOWED_NETWORKS = []  # as if the name now led to loopback
    chat = ChatClient(server.base_url, "sk-keepalive", timeout=5, max_retries=3, limiter=RateLimiter(60_000))
    try:
        with pytest.raises(EndpointError, match="refused to connect to 127.0.0.1") as refused:
            run_in_own_loop(chat.complete_async(BODY))
        assert refused.value.fatal and refused.value.attempts == 1 and server.connections == 0
    finally:
        server.close()
