"""The queries a request ran, in a response header (X-Queries), for bench/bench_crowd.py's profile mode only
(bench/profile_settings.py puts this middleware first); the app's own settings never load it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse


def query_count(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        count = [0]

        def counted(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
            count[0] += 1
            return execute(sql, params, many, context)

        with connections["default"].execute_wrapper(counted):
            response = get_response(request)
        response["X-Queries"] = str(count[0])
        return response

    return middleware
