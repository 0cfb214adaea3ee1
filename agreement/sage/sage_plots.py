"""SAGE bar plots, one per category (and the overall), as SVG drawn with matplotlib like results/figure2.py.

A plain `Figure` (no pyplot, so concurrent requests share no state), text kept as text, a fixed hash salt
and no date, so the same table always draws the same bytes. Bars are coloured by group (embedding models,
classical metrics, humans), as Table 1 groups its rows; a row without the category has no bar.
"""
from __future__ import annotations

import io
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from agreement.sage.table import GROUP_TITLES, HEADERS
from measures.results.figure2 import COLORS

GROUP_COLORS = {"embedding": "#2456c7", "classical": "#1e7b45", "human": "#b42318"}
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "hume-sage", "text.parse_math": False,
         "font.family": "DejaVu Sans", "font.size": 9}


def title_of(category: str) -> str:
    return "Overall" if category == "overall" else HEADERS[category]


def bars_svg(table: dict[str, Any], category: str) -> str:
    """One horizontal bar per row of Table 1 for `category` (a category key or "overall"), 0-1 axis."""
    rows = table["rows"]
    values = [r["overall"] if category == "overall" else r["scores"][category] for r in rows]
    figure = Figure(figsize=(5.5, 0.45 * len(rows) + 1.0))
    axes = figure.add_subplot()
    positions = list(range(len(rows)))[::-1]
    axes.barh(positions, [v or 0.0 for v in values], color=[GROUP_COLORS.get(r["group"], COLORS["median"])
                                                              for r in rows])
    for y, v in zip(positions, values, strict=True):
        axes.text((v or 0.0) + 0.01, y, "–" if v is None else f"{v:.3f}", va="center", color=COLORS["text"])
    axes.set_yticks(positions, [r["name"] for r in rows])
    axes.set_xlim(0, 1.1)
    axes.set_xlabel("score (0-1)")
    axes.set_title(title_of(category), color=COLORS["text"])
    groups = list(dict.fromkeys(r["group"] for r in rows))
    handles = [matplotlib.patches.Patch(color=GROUP_COLORS.get(g, COLORS["median"]), label=GROUP_TITLES.get(g, g))
               for g in groups]
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    figure.tight_layout()
    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
