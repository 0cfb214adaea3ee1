"""Brute-force protection: the login page through django-axes, API tokens through a counter in the cache.

Login: django-axes counts failed logins per account and address together (AXES_LOCKOUT_PARAMETERS) in the
database and refuses even the right password from that address while a lock lasts; an admin unlocks from the
admin's "Access attempts" page or with `manage.py axes_reset_username NAME`. Calls of `authenticate()` without a
request (the test client's `login`, management commands) have no address to lock and skip the check, as before
axes.

API tokens: a token is 160 random bits, so guessing one is hopeless, but a client hammering with bad tokens
still costs a query each; after API_AUTH_FAILURE_LIMIT failures from one address within
API_AUTH_FAILURE_WINDOW seconds every failed token request from it is answered 429 until the window ends.
A valid token is never refused: many people may share one address (behind a proxy or a NAT), and one client
sending bad tokens must not lock the others out.

The counter lives in Redis (the THROTTLE_CACHE). When Redis is unreachable the throttle fails open: the token
is still checked against the database, so a wrong token is still a 401 and a right one still works, and each
failure to reach the counter is logged as a warning. The throttle only saves queries, so losing it for a while
costs less than refusing every annotator's API call with a 500 (issue 23, item 2).
"""
from __future__ import annotations

import logging
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework import exceptions

logger = logging.getLogger(__name__)
# what the cache raises when Redis is down, refuses the connection or times out
CACHE_ERRORS = (RedisError, OSError)


class LockoutBackend(AxesStandaloneBackend):
    """axes' lockout check, for web logins only (see the module docstring)."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None, password: str | None = None,
                     **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT reverse proxies the address the first
    of them saw (X-Forwarded-For counted from the right, so a client cannot choose it)."""
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    if proxies and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "")


def _cache_key(request: HttpRequest) -> str:
    return f"api-auth-failures:{client_address(request)}"


def refuse_if_throttled(request: HttpRequest) -> None:
    """Raise 429 when this address has used up its failed API authentications; let the request through (with
    a logged warning) when the counter cannot be read."""
    try:
        failures = caches[settings.THROTTLE_CACHE].get(_cache_key(request), 0)
    except CACHE_ERRORS as error:
        logger.warning("API authentication throttle not checked (cache unreachable: %s); request let through",
                       error)
        return
    if failures >= settings.API_AUTH_FAILURE_LIMIT:
        raise exceptions.Throttled(wait=settings.API_AUTH_FAILURE_WINDOW,
                                   detail="Too many failed authentications from this address; try again later.")


def count_failure(request: HttpRequest) -> None:
    """Count one failed API authentication from this address; a cache that cannot be reached is logged."""
    try:
        _count_failure(request)
    except CACHE_ERRORS as error:
        logger.warning("API authentication failure from %s not counted (cache unreachable: %s)",
                       client_address(request), error)


def _count_failure(request: HttpRequest) -> None:
    cache = caches[settings.THROTTLE_CACHE]
    key = _cache_key(request)
    # add() starts the window only on the first failure, so steady failures cannot keep extending it
    if not cache.add(key, 1, timeout=settings.API_AUTH_FAILURE_WINDOW):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=settings.API_AUTH_FAILURE_WINDOW)
