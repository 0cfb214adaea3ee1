"""HUME Figures 1 and 12–16 as data (pure) and as SVG/PNG (matplotlib, drawn like Figure 2 in ``plots``).

Data come from the pure layer's rows: Figure 1 from ``leaderboard.table1`` (overall score per entry),
Figure 12 from ``leaderboard.win_rates``, Figures 13–16 from ``leaderboard.per_task`` rows (one per
subset, with every model's score). Each ``figure_N`` returns ``{"title", "bars": [{"label", "value",
"group"}], "summary"}``: one horizontal bar per entry, subset or group, and the caption's figure (e.g.
Figure 13: humans beat the best model on 4 of 26 subsets, 15.4%). The paper's captions are the checks
in ``tests/test_paper_figures.py``.

* Figure 1 — overall score per entry, human entries marked.
* Figure 12 — win rate of the human against the best / median / mean model, by kind, language, scope.
* Figure 13 — human − best model per subset (×100); Figure 14 the same against the median model.
* Figure 15 — difficulty bands of the human score: easy ≥ 0.7, medium 0.5–0.7, hard < 0.5.
* Figure 16 — model range (best − worst model) per subset: larger means models agree less.
"""
from __future__ import annotations

import io
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from measures.results.figure2 import COLORS, STYLE
from measures.results.subset_scores import compact_task_name

TITLES = {"1": "overall bars", "12": "win rates", "13": "gap to the best model", "14": "gap to the median model",
          "15": "difficulty bands", "16": "model range per subset"}
FIGURES = tuple(TITLES)
BAND_COLORS = {"easy": "#1e7b45", "medium": "#b7791f", "hard": "#b42318"}
GROUP_COLORS = {"human": COLORS["above"], "llm": "#7a4cc2", "model": COLORS["within"], "best": COLORS["above"],
                "median": COLORS["within"], "mean": COLORS["median"], "ahead": COLORS["above"],
                "behind": COLORS["below"], **BAND_COLORS, "range": COLORS["median"]}


def _subset(row: Mapping[str, Any]) -> str:
    return f"{compact_task_name(row['task'])} [{row['language'].split('-')[0]}]"


def figure_1(table1_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ranked = [row for row in table1_rows if row["overall"] is not None]
    bars = [{"label": row["name"].split("/")[-1], "value": 100 * row["overall"], "group": row["agent"]}
            for row in sorted(ranked, key=lambda r: -r["overall"])]
    humans = [(i + 1, bar) for i, bar in enumerate(bars) if bar["group"] == "human"]
    summary = "; ".join(f"{bar['label']} ranks {rank} of {len(bars)} ({bar['value']:.1f})" for rank, bar in humans)
    return {"title": "Overall score: humans among embedding models (HUME Figure 1)", "xlabel": "mean main score (×100)",
            "bars": bars, "summary": summary}


def figure_12(win_rates: Mapping[str, Any]) -> dict[str, Any]:
    bars = []
    for group in ("by_kind", "by_scope", "by_language"):
        for label, rates in win_rates.get(group, {}).items():
            for baseline in ("best", "median", "mean"):
                if rates["rate"][baseline] is not None:
                    bars.append({"label": f"{label} vs {baseline}", "value": 100 * rates["rate"][baseline],
                                 "group": baseline})
    overall = win_rates["overall"]["rate"]
    summary = ", ".join(f"{100 * overall[b]:.0f}% vs {b}" for b in ("best", "median", "mean")
                        if overall[b] is not None)
    return {"title": "Human win rates against the best, median and mean model (HUME Figure 12)",
            "xlabel": "win rate (%)", "bars": bars, "summary": f"overall: {summary}"}


def figure_gap(per_task: Sequence[Mapping[str, Any]], baseline: str) -> dict[str, Any]:
    """Figures 13 (baseline "best") and 14 ("median"): human − baseline model per subset, ×100."""
    pick = max if baseline == "best" else statistics.median
    bars = []
    for row in per_task:
        scores = [cell["score"] for cell in row["models"]]
        if scores:
            gap = 100 * (row["human"] - pick(scores))
            bars.append({"label": _subset(row), "value": gap, "group": "ahead" if gap > 0 else "behind"})
    ahead = sum(bar["group"] == "ahead" for bar in bars)
    number = 13 if baseline == "best" else 14
    share = f"{100 * ahead / len(bars):.1f}%" if bars else "n/a"
    return {"title": f"Human − {baseline} model per subset (HUME Figure {number})", "xlabel": "gap (points ×100)",
            "bars": bars, "summary": f"humans ahead on {ahead} of {len(bars)} subsets ({share})"}


def band(score: float) -> str:
    """HUME Figure 15's difficulty bands of a human score (0–1)."""
    return "easy" if score >= 0.7 else "medium" if score >= 0.5 else "hard"


def figure_15(per_task: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    bars = [{"label": _subset(row), "value": 100 * row["human"], "group": band(row["human"])} for row in per_task]
    counts = {name: sum(bar["group"] == name for bar in bars) for name in BAND_COLORS}
    easy = f"{100 * counts['easy'] / len(bars):.0f}%" if bars else "n/a"
    return {"title": "Task difficulty by human score (HUME Figure 15)", "xlabel": "human score (×100)",
            "bars": bars, "counts": counts,
            "summary": f"{counts['easy']} easy ({easy}), {counts['medium']} medium, {counts['hard']} hard"}


def figure_16(per_task: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    bars = []
    for row in per_task:
        scores = [cell["score"] for cell in row["models"]]
        if scores:
            bars.append({"label": _subset(row), "value": 100 * (max(scores) - min(scores)), "group": "range"})
    widest = max(bars, key=lambda bar: bar["value"], default=None)
    return {"title": "Model range per subset: best − worst model (HUME Figure 16)", "xlabel": "range (points ×100)",
            "bars": bars, "summary": f"widest: {widest['label']} ({widest['value']:.1f})" if widest else "no subset"}


def render(data: Mapping[str, Any], fmt: str) -> str | bytes:
    """The figure as a standalone SVG document (str) or a 150 dpi PNG (bytes)."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"figures render as svg or png, not {fmt!r}")
    with matplotlib.rc_context(STYLE):
        figure = _draw(data)
        if fmt == "svg":
            text = io.StringIO()
            figure.savefig(text, format="svg", metadata={"Date": None})
            return text.getvalue()
        binary = io.BytesIO()
        figure.savefig(binary, format="png", dpi=150, metadata={"Software": None})
        return binary.getvalue()


def _draw(data: Mapping[str, Any]) -> Figure:
    bars = data["bars"]
    figure = Figure(figsize=(8.0, 1.4 + 0.24 * max(len(bars), 1)), layout="constrained")
    axes = figure.add_subplot()
    ordered = list(reversed(bars))  # first bar at the top
    axes.barh(range(len(ordered)), [bar["value"] for bar in ordered],
              color=[GROUP_COLORS.get(bar["group"], COLORS["within"]) for bar in ordered], height=0.7)
    axes.set_yticks(range(len(ordered)), [_plain(bar["label"]) for bar in ordered], fontsize=7.5)
    axes.axvline(0, color=COLORS["text"], linewidth=0.6)
    axes.set_xlabel(data["xlabel"])
    axes.grid(axis="x", color=COLORS["rule"], linewidth=0.6)
    axes.set_axisbelow(True)
    for spine in ("top", "right"):
        axes.spines[spine].set_visible(False)
    figure.suptitle(_plain(f"{data['title']} — {data['summary']}"), x=0.01, ha="left", fontsize=9)
    if not bars:
        axes.text(0.5, 0.5, "nothing to show", transform=axes.transAxes, ha="center")
    return figure


def _plain(text: str) -> str:
    return "".join(char for char in str(text) if char.isprintable())
