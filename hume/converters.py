"""The `<id:...>` path converter: a row id in a URL, digits that fit a signed 64-bit integer.

Django's `<int:...>` takes any number of digits. PostgreSQL answers an id past bigint with no row, but SQLite
(the embedded default) raised OverflowError on /annotate/b/<20 digits>/ and every loop URL, a 500 (issue 23,
item 7). An id that cannot be a row's is no match here, so a 404 before any query. Registered by the app
`hume` (apps.py), before any URL module is read; every app's URLs name their ids with it.
"""
from __future__ import annotations

MAX_ID = 2**63 - 1  # PostgreSQL bigint, SQLite INTEGER


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(f"{value} is beyond the largest id")  # Django: no match, 404
        return number

    def to_url(self, value: int | str) -> str:
        return str(int(value))
