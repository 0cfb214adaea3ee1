"""csv_safety.safe_cell: dataset text exported to CSV can never run as a spreadsheet formula (OWASP CSV injection)."""
from __future__ import annotations

import csv
import io

import pytest

from hume.lib.csv_safety import safe_cell, safe_row


@pytest.mark.parametrize(("value", "expected"), [
    ('=HYPERLINK("http://evil.example","click")', '\'=HYPERLINK("http://evil.example","click")'),
    ("+1+2", "'+1+2"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("-", "'-"),
    ("=", "'="),
])
def test_formula_starts_get_a_leading_quote(value: str, expected: str) -> None:
    assert safe_cell(value) == expected


@pytest.mark.parametrize("value", ["-3.5", "+7", "-0", "-.5", "-1e-3", "12", "plain text", "a=b", "", " =1"])
def test_numbers_and_ordinary_text_stay_as_they_are(value: str) -> None:
    assert safe_cell(value) == value


@pytest.mark.parametrize("value", [None, 3, -2.5, True, ["=x"]])
def test_values_that_are_not_strings_pass_through(value: object) -> None:
    assert safe_cell(value) is value


def test_a_written_row_reads_back_with_the_formula_neutralised() -> None:
    out = io.StringIO()
    csv.writer(out).writerow(safe_row(["i1", '=HYPERLINK("http://x","y")', -1.5, "-1.5", "@evil"]))
    assert next(csv.reader(io.StringIO(out.getvalue()))) == ["i1", '\'=HYPERLINK("http://x","y")', "-1.5", "-1.5",
                                                              "'@evil"]
