"""Spreadsheet-safe CSV cells, for every CSV export in the project.

Dataset text is untrusted. A cell starting with = + - @ (or a tab or carriage return, which some spreadsheets
skip before reading the formula) runs as a formula when the CSV is opened in Excel or LibreOffice, e.g.
=HYPERLINK("http://evil", "click"). Prefixing such a cell with a single quote makes spreadsheets show it as text
(OWASP "CSV injection"). Plain numbers such as -3.5 stay numbers, so scores remain usable.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
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
