"""The report page's charts as SVG, drawn with matplotlib from a stored report's ``charts`` data.

Drawn like HUME Figure 2 (``results/figure2``): plain ``Figure`` objects (no pyplot state), text kept as text,
no mathtext, and matplotlib's inline CSS turned into presentation attributes, so the SVG obeys the app's
Content-Security-Policy even when opened on its own. The page shows each chart as an ``<img>`` served by
``views.report_chart`` with the report's permissions (researchers and admins; gold never reaches an
annotator). Which charts a report has: ``available(doc)``.
"""
from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from agreement.core.report_document import ReportDocument
from measures import metric_names
from measures.results.figure2 import COLORS, STYLE, without_inline_css

PALETTE = ("#2456c7", "#b7791f", "#1e7b45", "#b42318", "#7a4cc2", "#0e7c86", "#5b6475", "#c2478a")
Doc = ReportDocument


class Chart:
    """One chart: its name in the URL, title, the alternative text and its drawing function."""

    def __init__(self, name: str, title: str, alt: str, draw: Callable[[Doc], Figure], needs: str,
                 wide: bool = False) -> None:
        self.name, self.title, self.alt, self.draw, self.needs, self.wide = name, title, alt, draw, needs, wide


def _plain(text: Any) -> str:
    return "".join(char for char in str(text) if char.isprintable())


def _finish(axes: Any) -> None:
    for spine in ("top", "right"):
        axes.spines[spine].set_visible(False)
    axes.set_axisbelow(True)


# ---------------------------------------------------------------- the charts


def draw_scores(doc: Doc) -> Figure:
    """Each annotator's main score with its 95% CI, and the combined human score with the report's CI."""
    data = doc["charts"]["annotator_scores"]
    human = doc["human"]
    rows = [*data["rows"], {"name": "human (combined)", "agent": "combined", "score": human["main_score"],
                            "ci_low": human["ci_low"], "ci_high": human["ci_high"]}]
    figure = Figure(figsize=(7.5, 1.4 + 0.35 * len(rows)), layout="constrained")
    axes = figure.add_subplot()
    for y, row in enumerate(reversed(rows)):
        color = {"llm": PALETTE[4], "combined": COLORS["above"]}.get(row["agent"], COLORS["within"])
        if row.get("ci_low") is not None:
            axes.plot([row["ci_low"], row["ci_high"]], [y, y], color=color, linewidth=1.4)
            axes.plot([row["ci_low"]] * 2 + [None] + [row["ci_high"]] * 2, [y - .15, y + .15, None, y - .15, y + .15],
                      color=color, linewidth=1.4)
        if row["score"] is not None:
            axes.add_patch(Rectangle((row["score"] - 0.006, y - 0.22), 0.012, 0.44, color=color))
            axes.text(row["score"], y + 0.3, f"{row['score']:.3f}", ha="center", fontsize=7, color=COLORS["text"])
    labels = [_plain(f"{r['name']} (LLM)" if r["agent"] == "llm" else r["name"]) for r in reversed(rows)]
    axes.set_yticks(range(len(rows)), labels)
    axes.set_ylim(-0.7, len(rows) - 0.3)
    low = min([0.0, *(v for r in rows for v in (r["score"], r.get("ci_low")) if v is not None)])
    axes.set_xlim(low, 1.0)
    axes.set_xlabel(_plain(f"{metric_names.label(data['metric'])} against gold (bar: score; whiskers: 95% CI)"))
    axes.grid(axis="x", color=COLORS["rule"], linewidth=0.6)
    _finish(axes)
    return figure


def draw_confusion(doc: Doc) -> Figure:
    data = doc["charts"]["confusion"]
    labels, matrix = data["labels"], data["matrix"]
    size = len(labels)
    figure = Figure(figsize=(2.4 + 0.6 * size, 1.8 + 0.5 * size), layout="constrained")
    axes = figure.add_subplot()
    top = max((v for row in matrix for v in row), default=0) or 1
    for g, row in enumerate(matrix):
        for p, count in enumerate(row):
            shade = count / top
            axes.add_patch(Rectangle((p - .5, g - .5), 1, 1, facecolor=(0.14, 0.34, 0.78, 0.08 + 0.85 * shade),
                                     edgecolor="white"))
            axes.text(p, g, str(count), ha="center", va="center", fontsize=8,
                      color="white" if shade > 0.55 else COLORS["text"])
    names = [_plain(label) for label in labels]
    axes.set_xticks(range(size), names, rotation=30 if size > 4 else 0, ha="right" if size > 4 else "center")
    axes.set_yticks(range(size), names)
    axes.set_xlim(-.5, size - .5)
    axes.set_ylim(size - .5, -.5)
    axes.set_xlabel(_plain(data["columns"]))
    axes.set_ylabel("gold")
    return figure


def draw_distribution(doc: Doc) -> Figure:
    """One stacked bar per annotator (and gold): the share of each label (clustering: clusters per set)."""
    data = doc["charts"]["distribution"]
    rows = data["rows"]
    figure = Figure(figsize=(7.5, 1.6 + 0.35 * len(rows)), layout="constrained")
    axes = figure.add_subplot()
    for y, row in enumerate(reversed(rows)):
        total = sum(row["counts"]) or 1
        left = 0.0
        for index, count in enumerate(row["counts"]):
            share = count / total
            if share:
                axes.add_patch(Rectangle((left, y - .35), share, .7, facecolor=PALETTE[index % len(PALETTE)],
                                         edgecolor="white", linewidth=0.5))
            left += share
    axes.set_yticks(range(len(rows)), [_plain(r["name"]) for r in reversed(rows)])
    axes.set_ylim(-.6, len(rows) - .4)
    axes.set_xlim(0, 1)
    axes.set_xlabel(_plain(f"share of answers per {data.get('title', 'label')}"))
    handles = [Rectangle((0, 0), 1, 1, facecolor=PALETTE[i % len(PALETTE)]) for i in range(len(data["labels"]))]
    if handles:  # matplotlib refuses a legend of no columns
        figure.legend(handles, [_plain(label) for label in data["labels"]], loc="outside lower center",
                      ncol=min(len(data["labels"]), 6), frameon=False, fontsize=8)
    _finish(axes)
    return figure


def _scatter(points: list[list[float]], colors: list[str], scale: list[float], xlabel: str, ylabel: str) -> Figure:
    figure = Figure(figsize=(4.6, 4.2), layout="constrained")
    axes = figure.add_subplot()
    lo, hi = scale
    pad = (hi - lo) * 0.05 or 0.5
    xs = [p[0] for p in points]
    limits = (min([lo, *xs, *(p[1] for p in points)]) - pad, max([hi, *xs, *(p[1] for p in points)]) + pad)
    axes.plot(limits, limits, color=COLORS["rule"], linewidth=1)
    axes.scatter(xs, [p[1] for p in points], s=14, c=colors, alpha=0.6, linewidths=0)
    axes.set_xlim(*limits)
    axes.set_ylim(*limits)
    axes.set_xlabel(_plain(xlabel))
    axes.set_ylabel(_plain(ylabel))
    axes.grid(color=COLORS["rule"], linewidth=0.5)
    _finish(axes)
    return figure


def draw_scatter_gold(doc: Doc) -> Figure:
    data = doc["charts"]["scatter_gold"]
    colors = [PALETTE[int(p[2]) % len(PALETTE)] for p in data["points"]]
    figure = _scatter(data["points"], colors, data["scale"], "gold score", "annotator's rating")
    names = data["names"]
    handles = [Rectangle((0, 0), 1, 1, facecolor=PALETTE[i % len(PALETTE)]) for i in range(len(names))]
    figure.legend(handles, [_plain(n) for n in names], loc="outside lower center", ncol=min(len(names), 4),
                  frameon=False, fontsize=8)
    return figure


def draw_scatter_pair(doc: Doc) -> Figure:
    data = doc["charts"]["scatter_pair"]
    return _scatter(data["points"], [COLORS["within"]] * len(data["points"]), data["scale"],
                    f"{data['a']}'s rating", f"{data['b']}'s rating")


CHARTS = (
    Chart("scores", "Per-annotator scores with 95% CIs",
          "Each annotator's main score against gold with its 95% confidence interval, and the combined human "
          "score.", draw_scores, "annotator_scores", wide=True),
    Chart("confusion", "Confusion matrix against gold",
          "Counts per gold label (rows) and the humans' answer (columns): the majority vote, or for reranking "
          "every judgment.", draw_confusion, "confusion"),
    Chart("distribution", "Answers per annotator",
          "Share of each label in each annotator's answers and in gold (clustering: clusters per set).",
          draw_distribution, "distribution", wide=True),
    Chart("scatter-gold", "Ratings against gold",
          "Each rating plotted against the gold score, one colour per annotator.", draw_scatter_gold, "scatter_gold"),
    Chart("scatter-pair", "Annotator against annotator",
          "The ratings of the two annotators who share the most items, one against the other.",
          draw_scatter_pair, "scatter_pair"),
)
BY_NAME = {chart.name: chart for chart in CHARTS}


def available(doc: Doc | None) -> list[Chart]:
    """The charts this stored report has data for (older reports, stored without chart data, have none)."""
    data = (doc or {}).get("charts") or {}
    return [chart for chart in CHARTS if data.get(chart.needs) and _has_marks(chart.needs, data[chart.needs])]


def _has_marks(needs: str, data: Any) -> bool:
    """False for a distribution or confusion matrix with nothing counted (a task with no answers yet: gold's
    row is empty for clustering and pairwise tasks), whose chart would be empty axes."""
    if needs == "distribution":
        return any(sum(row["counts"]) for row in data.get("rows", []))
    if needs == "confusion":
        return any(sum(row) for row in data.get("matrix", []))
    return True


_CACHE: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


def chart_svg(doc: Doc, name: str, key: tuple[Any, ...] = ()) -> str:
    """The chart as a standalone SVG document with no inline CSS; drawn once per `key` per process."""
    cache_key = (*key, name)
    with _CACHE_LOCK:
        if key and cache_key in _CACHE:
            _CACHE.move_to_end(cache_key)
            return _CACHE[cache_key]
    chart = BY_NAME[name]
    buffer = io.StringIO()
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"hume-report-{name}"}):
        figure = chart.draw(doc)
        figure.suptitle(chart.title, x=0.01, ha="left", fontsize=10, color=COLORS["text"])
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg = without_inline_css(buffer.getvalue())
    if key:
        with _CACHE_LOCK:
            _CACHE[cache_key] = svg
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return svg
