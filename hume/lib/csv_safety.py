"""Spreadsheet-safe CSV cells, for every CSV export in the project.

Dataset text is untrusted. A cell starting with = + - @ (or a tab or carriage return, which some spreadsheets
skip before reading the formula) runs as a formula when the CSV is opened in Excel or LibreOffice, e.g.
=HYPERLINK("http://evil", "click"). Prefixing such a cell with a single quote makes spreadsheets show it as text
(OWASP "CSV injection"). Plain numbers such as -3.5 stay numbers, so scores remain usable.

`safe_cell`/`safe_row` suit a csv.writer the caller already holds; `to_csv` writes a whole document of text
cells (`csv_cell`), for the leaderboard and progress exports.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """The value to write to a CSV cell: strings that a spreadsheet would run as a formula get a leading '."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


def safe_row(values: Iterable[Any]) -> list[Any]:
    """safe_cell over a row, for csv.writer.writerow(safe_row(...))."""
    return [safe_cell(v) for v in values]


def csv_cell(value: object) -> str:
    """The text of one cell: None is empty, datetimes are ISO 8601, anything else is str(value) made safe.

    Unlike safe_cell, non-strings are rendered first and then checked, so e.g. float("-inf") is quoted too.
    """
    if value is None:
        return ""
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return safe_cell(text)


def to_csv(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A CSV document with every cell, header included, passed through csv_cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(name) for name in header])
    writer.writerows([csv_cell(value) for value in row] for row in rows)
    return buffer.getvalue()
