"""SAGE Table 1 (SAGE, arXiv:2509.21310, §4) as JSON, CSV and LaTeX: category columns kept apart, overall last.

Columns in the paper's order: Clustering, Human Pref., Robustness, Sensitivity, Retrieval, Overall; rows
grouped as the paper groups them (embedding models, classical metrics, and humans, which the paper could
not report). Scores on 0-1 with three decimals, as printed in the paper. A category the study did not
cover is empty in CSV and "--" in LaTeX. Names are untrusted: CSV cells are formula-safe and LaTeX
special characters are escaped.
"""
from __future__ import annotations

import json
from typing import Any

from agreement.results.table_formats import latex_escape
from hume.lib.csv_safety import to_csv
from measures.sage.categories import CATEGORIES

HEADERS = {"clustering": "Clustering", "human_preference": "Human Pref.", "robustness": "Robustness",
           "sensitivity": "Sensitivity", "retrieval": "Retrieval"}
GROUP_TITLES = {"embedding": "Embedding Models", "classical": "Classical Metrics", "human": "Humans"}
FORMATS = ("json", "csv", "latex")


def fmt_score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def to_json(table: dict[str, Any]) -> str:
    return json.dumps(table, ensure_ascii=False, allow_nan=False, indent=2)


def to_csv_text(table: dict[str, Any]) -> str:
    header = ["model", "group", *CATEGORIES, "overall"]
    body = [[r["name"], r["group"], *(fmt_score(r["scores"][c]) for c in CATEGORIES), fmt_score(r["overall"])]
            for r in table["rows"]]
    return to_csv(header, body)


def _flatten(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _flatten(inner, f"{path}.{key}" if path else key)]
    return [(path, value)]


def subtables_csv(table: dict[str, Any]) -> str:
    """The per-dataset subtables (Tables 2-6 and the clustering and retrieval details), one number a row.

    `key` is the path inside the JSON subtable, e.g. `news.summary_over_semantic` (robustness, dataset news)
    or `insertion.essays` (sensitivity) or `mini.ndcg_at_10.word_shuffle` (retrieval).
    """
    body = [[category, model, key, fmt_score(value) if isinstance(value, float) else value]
            for category, per_model in table["subtables"].items()
            for model, detail in per_model.items() for key, value in _flatten(detail)]
    return to_csv(["category", "model", "key", "value"], body)


def to_latex(table: dict[str, Any], caption: str | None = None) -> str:
    width = len(CATEGORIES) + 2
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "c" * (width - 1) + "}", r"\toprule",
             " & ".join(["Model / Metric", *(HEADERS[c] for c in CATEGORIES), "Overall"]) + r" \\", r"\midrule"]
    group = None
    for row in table["rows"]:
        if row["group"] != group:
            group = row["group"]
            title = latex_escape(GROUP_TITLES.get(group, group))
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\textit{{{title}}}}} \\")
        cells = [fmt_score(row["scores"][c]) or "--" for c in CATEGORIES]
        lines.append(" & ".join([latex_escape(row["name"]), *cells, fmt_score(row["overall"]) or "--"]) + r" \\")
    caption = caption or ("Performance on the SAGE benchmark across five evaluation categories. Scores are "
                          "normalized to [0,1]. The overall score is the unweighted mean across categories.")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(caption)}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def render(table: dict[str, Any], fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return {"json": to_json, "csv": to_csv_text, "latex": to_latex}[fmt](table)
