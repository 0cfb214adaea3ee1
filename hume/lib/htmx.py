"""The one htmx "page or partial" helper: every view that answers htmx with a fragment of the page it also
serves whole asks here (docs/style.md, "Views and pages"; `tests/test_one_guard.py` fails on a `request.htmx`
or an `HX-Request` anywhere else).

- `wants_partial(request)`: an htmx request that swaps part of a page. A history restore (htmx asks again for a
  page it no longer has in its cache, after the back button) is not one: htmx puts the reply in place of the
  whole body, so it gets the whole page, as a plain request does.
- `page_or_partial(request, page, partial, context)`: renders one or the other and says `Vary: HX-Request`, so a
  cache never hands a fragment to a plain request or a page to htmx.
- `vary_on_htmx`: the view decorator for views that branch on `wants_partial` in another way (a redirect for a
  plain request, a row instead of a list).
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.vary import vary_on_headers

HX_REQUEST = "HX-Request"
vary_on_htmx = vary_on_headers(HX_REQUEST)


def wants_partial(request: HttpRequest) -> bool:
    """Whether htmx asked for a fragment (django-htmx's `request.htmx`), history restores left out."""
    details = getattr(request, "htmx", None)
    return bool(details) and not details.history_restore_request


def vary(response: HttpResponse) -> HttpResponse:
    """The response, marked as differing by whether htmx asked (for responses built without `page_or_partial`)."""
    patch_vary_headers(response, (HX_REQUEST,))
    return response


def page_or_partial(request: HttpRequest, page: str, partial: str, context: dict[str, Any], *,
                    status: int | None = None) -> HttpResponse:
    """The `partial` template for htmx, the whole `page` otherwise, with `Vary: HX-Request`."""
    template = partial if wants_partial(request) else page
    return vary(render(request, template, context, status=status))
