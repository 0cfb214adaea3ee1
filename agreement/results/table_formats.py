"""The human-vs-model tables written out: JSON, formula-safe CSV (hume/lib/csv_safety.py) and LaTeX (booktabs)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agreement.core.latex import escape
from hume.lib.csv_safety import to_csv
from measures.results.subset_scores import short_task_name


def to_json(rows: Any) -> str:
    """Serialize result rows; NaN is refused rather than written as invalid JSON."""
    return json.dumps(rows, ensure_ascii=False, allow_nan=False, indent=2)


def fmt_score(value: float | None, scale: float, digits: int) -> str:
    return "" if value is None else f"{value * scale:.{digits}f}"


def table1_to_csv(
    rows: Sequence[Mapping[str, Any]], *, scale: float = 100.0, digits: int = 1
) -> str:
    """Table 1 as CSV, scores scaled like the paper (×100, one decimal)."""
    columns = list(rows[0]["columns"]) if rows else []
    header = ["rank", "name", "agent", *columns, "overall", "n_subsets"]
    body = [
        [
            row["rank"],
            row["name"],
            row["agent"],
            *(fmt_score(row["columns"][column], scale, digits) for column in columns),
            fmt_score(row["overall"], scale, digits),
            row["n_subsets"],
        ]
        for row in rows
    ]
    return to_csv(header, body)


def per_task_to_csv(
    rows: Sequence[Mapping[str, Any]], *, scale: float = 100.0, digits: int = 1
) -> str:
    """Table 8 as CSV: one line per subset, with the best model and its outside-CI mark."""
    header = [
        "task",
        "kind",
        "language",
        "human",
        "ci_low",
        "ci_high",
        "human_rank",
        "best_model",
        "best_score",
        "best_outside_ci",
        "best_pct_of_human",
    ]
    body = []
    for row in rows:
        best = row["best_model"] or {}
        low, high = row["ci"] or (None, None)
        body.append(
            [
                short_task_name(row["task"]),
                row["kind"],
                row["language"],
                fmt_score(row["human"], scale, digits),
                fmt_score(low, scale, digits),
                fmt_score(high, scale, digits),
                row["human_rank"],
                best.get("name"),
                fmt_score(best.get("score"), scale, digits),
                best.get("outside_ci"),
                fmt_score(best.get("pct_of_human"), 1.0, digits),
            ]
        )
    return to_csv(header, body)


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters so model names like ``e5_base`` or ``50%`` typeset as text."""
    return escape(text)


def table1_to_latex(
    rows: Sequence[Mapping[str, Any]],
    *,
    scale: float = 100.0,
    digits: int = 1,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """Table 1 as a LaTeX table (booktabs): bold = best per column, underline = best model."""
    columns = [*(list(rows[0]["columns"]) if rows else []), "overall"]
    cells = {column: [_cell(row, column) for row in rows] for column in columns}
    kinds = [column.split("/")[0] for column in columns[:-1]]
    spans = [(kind, kinds.count(kind)) for kind in dict.fromkeys(kinds)]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(columns) + "}",
        r"\toprule",
        " & ".join(
            [
                "",
                *(rf"\multicolumn{{{n}}}{{c}}{{{latex_escape(kind)}}}" for kind, n in spans),
                "Overall",
            ]
        )
        + r" \\",
        " & ".join(["Model", *(latex_escape(c.split("/")[1][:3]) for c in columns[:-1]), ""])
        + r" \\",
        r"\midrule",
    ]
    for position, row in enumerate(rows):
        values = [_latex_value(cells[column], position, rows, scale, digits) for column in columns]
        lines.append(" & ".join([latex_escape(str(row["name"])), *values]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _cell(row: Mapping[str, Any], column: str) -> float | None:
    return row["overall"] if column == "overall" else row["columns"][column]


def _latex_value(
    column: Sequence[float | None],
    position: int,
    rows: Sequence[Mapping[str, Any]],
    scale: float,
    digits: int,
) -> str:
    value = column[position]
    if value is None:
        return "--"
    text = fmt_score(value, scale, digits)
    present = [v for v in column if v is not None]
    models = [
        v for v, row in zip(column, rows, strict=True) if v is not None and row["agent"] == "model"
    ]
    if value == max(present):
        text = rf"\textbf{{{text}}}"
    if rows[position]["agent"] == "model" and models and value == max(models):
        text = rf"\underline{{{text}}}"
    return text
