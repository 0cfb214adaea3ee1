"""Evaluation rows as JSON, CSV (cells safe from spreadsheet formulas) or a LaTeX table."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agreement.core.latex import escape
from hume.lib.csv_safety import to_csv


def as_json(rows: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(rows), indent=2, ensure_ascii=False)


def as_csv(rows: Sequence[dict[str, Any]]) -> str:
    header = list(rows[0]) if rows else []
    return to_csv(header, [[row[c] for c in header] for row in rows])


def latex_text(value: object) -> str:
    return escape(value)


def as_latex(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A booktabs tabular: ranking, subset, reference, then the chosen metric columns (×100, one decimal)."""
    head = ["ranking", "subset", "reference", *columns]
    lines = [r"\begin{tabular}{lll" + "r" * len(columns) + "}", r"\toprule",
             " & ".join(latex_text(h) for h in head) + r" \\", r"\midrule"]
    for row in rows:
        cells = [latex_text(row["ranking"]), latex_text(row["subset"]), latex_text(row["reference"])]
        cells += [f"{100 * row[c]:.1f}" for c in columns]
        lines.append(" & ".join(cells) + r" \\")
    return "\n".join([*lines, r"\bottomrule", r"\end{tabular}"]) + "\n"
