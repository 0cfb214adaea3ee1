"""The queries a request ran, in a response header (X-Queries), for bench/bench_crowd.py's profile mode only
(bench/profile_settings.py puts this middleware first); the app's own settings never load it.

Django's cursors are counted with an execute wrapper; the annotator loop's prepared statements on PostgreSQL
(annotation/core/rawsql.py) bypass Django's cursor, so each use of its kept cursor is counted too."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse

from annotation.core import rawsql

_count = [0]
_kept_cursor = rawsql._kept_cursor


def _counted_kept_cursor(db: Any) -> Any:
    _count[0] += 1
    return _kept_cursor(db)


rawsql._kept_cursor = _counted_kept_cursor


def query_count(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        _count[0] = 0  # one request at a time per process (sync workers, one profiling client)

        def counted(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
            _count[0] += 1
            return execute(sql, params, many, context)

        with connections["default"].execute_wrapper(counted):
            response = get_response(request)
        response["X-Queries"] = str(_count[0])
        return response

    return middleware
