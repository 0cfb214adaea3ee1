"""Documented bounds on every size a user gives, checked before the kinds look at a value.

Without them a 2 MB cluster id was stored, the error for a bad label echoed 9 MB back, and a Likert scale of a
million points rendered a 51 MB page. The limits (docs/import.md lists them):

- ids and labels (cluster ids, class labels, candidate and document ids, external ids, axes): MAX_ID_CHARS;
- an answer: strings of at most MAX_ID_CHARS, nested at most MAX_ANSWER_DEPTH deep, MAX_ANSWER_NODES values;
- a task: at most MAX_LABELS labels, MAX_AXES axes; a scale whose every point is a button (Likert) at most
  MAX_SCALE_POINTS points, any other stepped scale (a slider) at most MAX_SLIDER_POINTS.
"""
from __future__ import annotations

from typing import Any

from tasks_app.core.kinds import ValidationProblem

MAX_ID_CHARS = 200
MAX_ANSWER_DEPTH = 4
MAX_ANSWER_NODES = 10_000
MAX_LABELS = 500
MAX_AXES = 20
MAX_SCALE_POINTS = 101
MAX_SLIDER_POINTS = 100_001
ECHO_CHARS = 80


def short(value: Any, limit: int = ECHO_CHARS) -> str:
    """A value as an error message may quote it: its repr, cut to `limit` characters."""
    if isinstance(value, int) and abs(value) > 10 ** 60:  # str() of a 5,000-digit integer raises
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text):,} characters)"


def check_id(value: Any, name: str) -> None:
    if isinstance(value, str) and len(value) > MAX_ID_CHARS:
        raise ValidationProblem(name, f"is {len(value):,} characters long, over the limit of {MAX_ID_CHARS}")


def check_answer(value: Any, name: str = "value") -> None:
    """Raise ValidationProblem naming the first part of an answer that is too long, deep or big."""
    nodes = 0

    def walk(node: Any, where: str, depth: int) -> None:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_ANSWER_NODES:
            raise ValidationProblem(name, f"has more than {MAX_ANSWER_NODES:,} values")
        if depth > MAX_ANSWER_DEPTH:
            raise ValidationProblem(where, f"is nested deeper than {MAX_ANSWER_DEPTH} levels")
        check_id(node, where)
        if isinstance(node, dict):
            for key, child in node.items():
                check_id(key, f"{where} (a key)")
                walk(child, f"{where}.{short(key, 40) if len(str(key)) > 40 else key}", depth + 1)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                walk(child, f"{where}[{i}]", depth + 1)

    walk(value, name, 0)


def check_record(record: dict[str, Any]) -> None:
    """An import record's ids and labels are within MAX_ID_CHARS: checked before the kind parses it, so no
    message quotes an oversized value."""
    for key in ("id", "_id", "label", "preferred"):
        check_id(record.get(key), key)
    labels = record.get("labels")
    if isinstance(labels, list):
        for i, label in enumerate(labels):
            check_id(label, f"labels[{i}]")
    for key in ("candidates", "documents"):
        entries = record.get(key)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict):
                check_id(entry.get("id"), f"{key}[{i}].id")


def task_problems(labels: list[Any], axes: list[Any], scale: tuple[float, float, float | None],
                  buttons: bool) -> dict[str, str]:
    """{field: message} for a task configuration over the limits; `buttons`: each scale point is rendered."""
    problems: dict[str, str] = {}
    if len(labels) > MAX_LABELS:
        problems["labels"] = f"{len(labels):,} labels, over the limit of {MAX_LABELS}"
    elif any(isinstance(x, str) and len(x) > MAX_ID_CHARS for x in labels):
        problems["labels"] = f"a label is longer than {MAX_ID_CHARS} characters"
    if len(axes) > MAX_AXES:
        problems["axes"] = f"{len(axes):,} axes, over the limit of {MAX_AXES}"
    elif any(isinstance(x, str) and len(x) > MAX_ID_CHARS for x in axes):
        problems["axes"] = f"an axis name is longer than {MAX_ID_CHARS} characters"
    lo, hi, step = scale
    limit = MAX_SCALE_POINTS if buttons else MAX_SLIDER_POINTS
    if step and hi > lo and (hi - lo) / step + 1 > limit:
        points = (hi - lo) / step + 1
        problems["scale_max"] = (f"the scale {lo:g}–{hi:g} in steps of {step:g} has {points:,.0f} points, "
                                 f"over the limit of {limit:,}")
    return problems
