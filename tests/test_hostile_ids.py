"""Ids beyond 64 bits in URLs are a 404, never a 500 (issue 23, item 7).

Django's `<int:...>` took any number of digits; SQLite (the embedded default) raised OverflowError on such an
id in every loop URL. Every id in a URL now goes through the `<id:...>` converter (hume/converters.py), which
refuses what cannot be a row's id before any query. The crawl tries every route of the URL tree with hostile
ids, GET and POST, as an annotator and as an admin.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve
from django.urls.converters import IntConverter

from hume.converters import MAX_ID, IdConverter
from tests.loop_data import batch_of

HUGE = "9" * 20  # > 2**64
JUST_PAST = str(MAX_ID + 1)  # 2**63, 19 digits


def routes(patterns=None, prefix: str = "") -> Iterator[tuple[str, object]]:
    """(the pattern's full text, the pattern) for every URL pattern of the tree."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        text = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from routes(entry.url_patterns, text)
        elif isinstance(entry, URLPattern):
            yield text, entry.pattern


def test_every_id_in_a_path_route_uses_the_id_converter() -> None:
    """No `<int:...>`, and every parameter named like an id (pk, batch_id, ...) is an `<id:...>`, the DRF
    routers' lookups included."""
    def loose_id(name: str, converter: object) -> bool:
        named_like_an_id = name == "pk" or name.endswith("_id")
        return isinstance(converter, IntConverter) or (named_like_an_id and not isinstance(converter, IdConverter))

    loose = [text for text, pattern in routes() if not text.startswith("admin/") and any(
        loose_id(name, converter) for name, converter in getattr(pattern, "converters", {}).items())]
    assert loose == []
    regex_ids = [text for text, _ in routes() if re.search(r"\(\?P<(pk|\w+_id)>", text)]
    assert [text for text in regex_ids if not text.startswith("admin/")] == []  # Django's admin: its own 404s
    assert any(isinstance(c, IdConverter) for _, p in routes() for c in getattr(p, "converters", {}).values())


@pytest.mark.parametrize("path", ["/annotate/b/{}/", "/api/v1/batches/{}/next/", "/api/v1/batches/1/items/{}/answer/",
                                  "/api/v1/batches/1/items/{}/skip/", "/annotate/b/1/items/{}/answer/",
                                  "/annotate/b/1/items/{}/skip/", "/reports/task/{}/"])
def test_an_id_past_64_bits_matches_no_route_and_the_largest_does(path: str) -> None:
    for hostile in (HUGE, JUST_PAST, "9" * 5000):
        with pytest.raises(Resolver404):
            resolve(path.format(hostile))
    assert resolve(path.format(MAX_ID)).kwargs  # the largest bigint is still an id


def hostile_urls() -> list[str]:
    """Every route with each parameter set to a 20-digit number (other parameters of a route get the same
    text, which is at worst a 404 for them too)."""
    urls = set()
    for text, _pattern in routes():
        if "<" not in text:
            continue
        url = re.sub(r"\(\?P<\w+>[^)]*\)", HUGE, text)  # router and admin patterns
        url = re.sub(r"<(?:\w+:)?\w+>", HUGE, url)  # path() routes
        url = url.replace("^", "").replace("$", "").replace("\\Z", "").replace("\\.", ".").replace("/?", "/")
        if "(" not in url and "[" not in url:
            urls.add("/" + url)
    return sorted(urls)


@pytest.mark.django_db
def test_a_crawl_with_20_digit_ids_gets_no_server_error(alice, carol) -> None:
    """An annotator, an admin and a superuser (the Django admin's pages), GET and POST on every route."""
    batch_of("sts", [alice])  # the annotator has a batch, so the loop's statements run for real
    root = User.objects.create_superuser("root", password="correct-horse-battery")  # the Django admin's pages
    urls = hostile_urls()
    assert len(urls) > 100 and "/annotate/b/" + HUGE + "/" in urls and f"/api/v1/annotators/{HUGE}/" in urls
    failures = []
    for user in (alice.user, carol, root):
        client = Client(raise_request_exception=False)
        client.force_login(user)
        for url in urls:
            for method in ("get", "post"):
                status = getattr(client, method)(url).status_code
                if status >= 500:
                    failures.append((user.username, method, url, status))
    assert failures == []
