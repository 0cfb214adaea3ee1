"""Search and sort for long lists (tasks, annotators, batches, reports): `?q=` and `?sort=` handled in the query.

Sort keys are whitelisted per list (a key maps to the fields or expressions it orders by), so a URL cannot
order by a field the page does not show; an unknown key falls back to the list's default. `q` matches any of
the list's search fields, case-insensitively. Table headers link to the next sort (ascending, then
descending), keeping `q`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import F, Q, QuerySet
from django.db.models.expressions import OrderBy
from django.http import HttpRequest
from django.utils.http import urlencode

MAX_QUERY_CHARS = 100


@dataclass(frozen=True)
class Listing:
    """What the page shows above and in its table: the search text, the sort in use, the header links."""

    q: str
    sort: str  # a whitelisted key, "-key" when descending
    links: dict[str, dict[str, str]] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)  # other parameters the page keeps (e.g. state=open)


def search_and_sort(request: HttpRequest, queryset: QuerySet[Any], *, search: Sequence[str],
                    sorts: Mapping[str, Sequence[Any]], default: str,
                    keep: Sequence[str] = ()) -> tuple[QuerySet[Any], Listing]:
    """Filter by `q` over `search` fields and order by the whitelisted `sort` key (`-key`: descending)."""
    # a NUL cannot be in any stored text, and PostgreSQL refuses it in a query (a 500 in the hostile crawl)
    q = request.GET.get("q", "").replace("\x00", "").strip()[:MAX_QUERY_CHARS]
    if q:
        queryset = queryset.filter(reduce(or_, (Q(**{f"{name}__icontains": q}) for name in search)))
        if any("__" in name for name in search):  # a match through a to-many relation may repeat a row
            queryset = queryset.distinct()
    sort = request.GET.get("sort", default)
    if sort.lstrip("-") not in sorts:
        sort = default
    descending, key = sort.startswith("-"), sort.lstrip("-")
    queryset = queryset.order_by(*(_ordered(part, descending) for part in (*sorts[key], "pk")))
    extra = {name: request.GET[name] for name in keep if request.GET.get(name)}
    links = {name: _link(name, sort, q, extra) for name in sorts}
    return queryset, Listing(q, sort, links, extra)


def _ordered(part: str | Any, descending: bool) -> OrderBy:
    """A field name ("-name": reversed within this key) or an expression such as Lower("name"); empty values
    always last, whichever way the column is sorted."""
    reverse = isinstance(part, str) and part.startswith("-")
    expression = F(part.lstrip("-")) if isinstance(part, str) else part
    if descending != reverse:
        return expression.desc(nulls_last=True)
    return expression.asc(nulls_last=True)


def _link(key: str, current: str, q: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The header of column `key`: ascending first, descending when it is already ascending."""
    ascending_now, descending_now = current == key, current == f"-{key}"
    target = f"-{key}" if ascending_now else key
    params = {**extra, **({"q": q} if q else {}), "sort": target}
    arrow = " ▲" if ascending_now else " ▼" if descending_now else ""
    state = "ascending" if ascending_now else "descending" if descending_now else "none"
    return {"url": "?" + urlencode(params), "arrow": arrow, "aria": state}
