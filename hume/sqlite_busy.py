"""SQLite's busy moments, on the pages a crowd reaches: a write that waits is tried again, never a 500.

The embedded mode runs SQLite (hume/settings.py: WAL, IMMEDIATE transactions, a busy timeout of
SQLITE_BUSY_TIMEOUT seconds). One writer at a time: under a crowd on a loaded machine a write can wait longer
than the timeout, and SQLite then raises "database is locked". A view wrapped here runs again after a short,
growing, random pause (SQLITE_LOCKED_RETRIES times, 6 by default). What it did before the error was rolled
back (the error ends the statement's transaction, and no view runs inside an outer one: ATOMIC_REQUESTS is
off), and the crowd's operations are written to be repeated (a replayed answer is stored once, stage steps
are conditional UPDATEs). When the database stays busy through every try, the participant gets a page that
says so and loads their page again by itself (200, not an error); nothing they sent is stored half.
PostgreSQL never takes this path (docs/crowd.md, "Under load": PostgreSQL is the database for crowd studies).

The session is saved after the view, by the session middleware: on SQLite the settings name this module's
SessionStore, the database store whose save waits and tries again the same way.
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.db import OperationalError, connection
from django.http import HttpRequest, HttpResponse

from hume import sessions

logger = logging.getLogger(__name__)
FIRST_PAUSE_SECONDS = 0.05  # doubled after each try, times a random 0.5-1.5: 0.05 + 0.1 + … ≈ 3 s in all


def is_locked(error: Exception) -> bool:
    return "database is locked" in str(error) or "database table is locked" in str(error)


def _pause(attempt: int) -> None:
    time.sleep(FIRST_PAUSE_SECONDS * 2**attempt * random.uniform(0.5, 1.5))


def retry_when_locked(busy: Callable[[HttpRequest], HttpResponse]) -> Callable:
    """Wrap a view: on SQLite, "database is locked" runs it again (SQLITE_LOCKED_RETRIES times), then answers
    `busy(request)`. Any other error, and every error on another database, goes up as before."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            retries = settings.SQLITE_LOCKED_RETRIES
            for attempt in range(retries + 1):
                try:
                    return view(request, *args, **kwargs)
                except OperationalError as error:
                    if connection.vendor != "sqlite" or not is_locked(error) or connection.in_atomic_block:
                        raise
                    logger.warning("SQLite busy on %s %s (try %d of %d): %s", request.method, request.path,
                                   attempt + 1, retries + 1, error)
                if attempt < retries:
                    _pause(attempt)
            return busy(request)

        return wrapped

    return decorate


class SessionStore(sessions.SessionStore):
    """The database session store (hume/sessions.py), whose save tries again while SQLite is locked
    (SESSION_ENGINE on SQLite)."""

    def save(self, must_create: bool = False) -> None:
        retries = settings.SQLITE_LOCKED_RETRIES
        for attempt in range(retries + 1):
            try:
                return super().save(must_create=must_create)
            except OperationalError as error:
                if connection.vendor != "sqlite" or not is_locked(error) or connection.in_atomic_block \
                        or attempt == retries:
                    raise
                _pause(attempt)
