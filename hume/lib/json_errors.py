"""What went wrong when Python's JSON decoder refused a text, said with the line, column and key.

Every place that parses uploaded JSON (dataset, annotation and corpus imports in hume/lib/import_reader.py, MTEB
results files, SAGE datasets) reports through this one function, so a hostile file gets the same clear
message everywhere instead of a 500. Standard library only, so the Django-free results parser can use it.
"""
from __future__ import annotations

import json
import re
import sys


def json_refusal(text: str, error: ValueError | RecursionError) -> tuple[str | None, str]:
    """Why Python's decoder refused `text`, as (field or None, message), for every way json.loads fails.

    Besides JSONDecodeError it raises RecursionError on deep nesting (one frame per level) and a plain
    ValueError on an integer longer than sys.get_int_max_str_digits() (4300 digits by default, CPython 3.11's
    guard against quadratic int parsing); neither says where, so the long number is found again here, with
    the key it is the value of."""
    if isinstance(error, RecursionError):
        return None, "invalid JSON: nested too deeply"
    if isinstance(error, json.JSONDecodeError):
        truncated = error.pos >= len(text) - 1 or error.msg.startswith("Unterminated string")
        hint = " (the line ends early: truncated?)" if truncated else ""
        return None, f"invalid JSON: {error.msg} (line {error.lineno}, column {error.colno}){hint}"
    limit = sys.get_int_max_str_digits()
    # the long number, after its key when it is an object's value; not digits that begin a string
    pattern = r'(?:"((?:[^"\\]|\\.){0,200})"\s*:\s*)?(?<!["\w.])-?(\d{' + str(limit + 1) + ',})'
    found = re.search(pattern, text) if limit else None
    if found is None:
        return None, f"invalid JSON: {error}"
    line = text.count("\n", 0, found.start(2)) + 1
    column = found.start(2) - (text.rfind("\n", 0, found.start(2)) + 1) + 1
    return found.group(1), (f"a number of {len(found.group(2))} digits (line {line}, column {column}), over the "
                            f"{limit}-digit limit for integers")
