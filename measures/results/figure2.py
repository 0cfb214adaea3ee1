"""HUME Figure 2 as SVG (shown inline in the page) and PNG (download), drawn once with matplotlib.

Why matplotlib: one drawing gives the page's SVG, the SVG download and the PNG download, so what a
researcher sees is what they download; its wheels bundle FreeType and the DejaVu fonts, so it installs
from PyPI with no system library. (cairosvg needs the system's libcairo; rasterising in the browser
would leave the CLI and API without a PNG.) No pyplot: figures are plain ``Figure`` objects, so
concurrent requests share no global state. Text stays text in the SVG (``svg.fonttype: none``) and
``$`` in a name is never read as mathtext.

Input rows are ``leaderboard.figure2`` rows (scores 0–1), optionally with ``ci`` [low, high].
"""
from __future__ import annotations

import io
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from measures.results.subset_scores import compact_task_name

COLORS = {"above": "#1e7b45", "within": "#2456c7", "below": "#b42318", "range": "#c5cbd6",
          "median": "#5b6475", "text": "#1d2330", "rule": "#dde1e8"}
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "hume-figure-2", "text.parse_math": False,
         "font.family": "DejaVu Sans", "font.size": 9}


_CACHE: OrderedDict[str, Any] = OrderedDict()
_CACHE_SIZE = 32
_CACHE_LOCK = threading.Lock()


def _cached(fmt: str, rows: Sequence[Mapping[str, Any]], title: str, human_label: str, draw: Any) -> Any:
    """Drawing takes ~0.5 s; the same data (page, then its download) is drawn once per process."""
    key = json.dumps([fmt, rows, title, human_label], sort_keys=True, default=str)
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    value = draw()
    with _CACHE_LOCK:
        _CACHE[key] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return value


def figure2_svg(rows: Sequence[Mapping[str, Any]], *, title: str, human_label: str = "Human") -> str:
    """The plot as a standalone SVG document (for download)."""
    def draw() -> str:
        buffer = io.StringIO()
        with matplotlib.rc_context(STYLE):
            _figure(rows, title, human_label).savefig(buffer, format="svg", metadata={"Date": None})
        return buffer.getvalue()

    return _cached("svg", rows, title, human_label, draw)


def figure2_inline_svg(rows: Sequence[Mapping[str, Any]], *, title: str, human_label: str = "Human") -> str:
    """The plot as an ``<svg>`` element to put in the page: no XML prolog, labelled for screen readers."""
    return page_svg(figure2_svg(rows, title=title, human_label=human_label), title)


def page_svg(document: str, label: str) -> str:
    """A matplotlib SVG document as an ``<svg>`` element to put in a page under the app's CSP: no XML prolog,
    no inline CSS (presentation attributes instead), labelled for screen readers."""
    element = document[document.index("<svg"):]
    label = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return re.sub(r"^<svg ", f'<svg role="img" aria-label="{label}" class="plot" ', without_inline_css(element),
                  count=1)


def without_inline_css(svg: str) -> str:
    """The SVG with matplotlib's `style` attributes and `<style>` element turned into presentation attributes
    (fill, stroke, font-size, ...), which a Content-Security-Policy without 'unsafe-inline' does not block."""
    def attributes(declarations: str) -> str:
        pairs = (d.split(":", 1) for d in declarations.split(";") if ":" in d)
        return " ".join(f'{name.strip()}="{value.strip()}"' for name, value in pairs)

    sheet = re.search(r'<style type="text/css">\*\{([^}]*)\}</style>', svg)
    if sheet:  # one rule for every element: inherited from the root instead
        svg = svg.replace(sheet.group(0), "")
        svg = re.sub(r"^<svg ", f"<svg {attributes(sheet.group(1))} ", svg, count=1)
    return re.sub(r'style="([^"]*)"', lambda m: attributes(m.group(1)), svg)


def figure2_png(rows: Sequence[Mapping[str, Any]], *, title: str, human_label: str = "Human") -> bytes:
    """The plot as a PNG at 150 dpi (about 1350 px wide)."""
    def draw() -> bytes:
        buffer = io.BytesIO()
        with matplotlib.rc_context(STYLE):
            _figure(rows, title, human_label).savefig(buffer, format="png", dpi=150, metadata={"Software": None})
        return buffer.getvalue()

    return _cached("png", rows, title, human_label, draw)


def position(row: Mapping[str, Any]) -> str:
    """Where the human stands: above every model, below every model, or within their range."""
    if row.get("max") is not None and row["human"] > row["max"]:
        return "above"
    if row.get("min") is not None and row["human"] < row["min"]:
        return "below"
    return "within"


def _figure(rows: Sequence[Mapping[str, Any]], title: str, human_label: str) -> Figure:
    figure = Figure(figsize=(9.0, 1.6 + 0.3 * max(len(rows), 1)), layout="constrained")
    axes = figure.add_subplot()
    ordered = list(reversed(rows))  # first row at the top
    for y, row in enumerate(ordered):
        _draw_row(axes, y, row)
    axes.set_yticks(range(len(ordered)), [_label(row) for row in ordered])
    axes.set_ylim(-0.6, max(len(ordered), 1) - 0.4)
    axes.set_xlim(0, 100)
    axes.set_xlabel("main score (×100)")
    axes.grid(axis="x", color=COLORS["rule"], linewidth=0.6)
    axes.set_axisbelow(True)
    for spine in ("top", "right"):
        axes.spines[spine].set_visible(False)
    _kind_rules(axes, ordered)
    figure.suptitle(_plain(title), x=0.01, ha="left", fontsize=10, color=COLORS["text"])
    figure.legend(handles=_legend(human_label), loc="outside lower center", ncol=3, frameon=False, fontsize=8)
    if not rows:
        axes.text(50, 0, "no subset to show", ha="center", va="center", color=COLORS["median"])
    return figure


def _draw_row(axes: Any, y: int, row: Mapping[str, Any]) -> None:
    if row.get("min") is not None:
        axes.plot([100 * row["min"], 100 * row["max"]], [y, y], color=COLORS["range"], linewidth=7,
                  solid_capstyle="butt")
        axes.plot([100 * row["median"]] * 2, [y - 0.22, y + 0.22], color=COLORS["median"], linewidth=1.5)
    color = COLORS[position(row)]
    if row.get("ci"):
        low, high = row["ci"]
        axes.plot([100 * low, 100 * high], [y, y], color=color, linewidth=1.2)
        axes.plot([100 * low] * 2 + [None] + [100 * high] * 2, [y - 0.12, y + 0.12, None, y - 0.12, y + 0.12],
                  color=color, linewidth=1.2)
    axes.plot([100 * row["human"]], [y], marker="o", markersize=6, color=color, markeredgecolor="white",
              markeredgewidth=0.8, linestyle="none")


def _kind_rules(axes: Any, ordered: Sequence[Mapping[str, Any]]) -> None:
    """A thin rule and the kind's name above each group of rows (Figure 2 groups by task kind)."""
    for y, row in enumerate(ordered):
        above = ordered[y + 1]["kind"] if y + 1 < len(ordered) else None
        if above != row["kind"]:
            if above is not None:
                axes.axhline(y + 0.5, color=COLORS["median"], linewidth=0.6)
            axes.text(0.5, y + 0.5, _plain(row["kind"]), ha="left", va="center", fontsize=7.5,
                      color=COLORS["median"], style="italic",
                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})


def _legend(human_label: str) -> list[Line2D]:
    def point(color: str, text: str) -> Line2D:
        return Line2D([], [], marker="o", color=color, linestyle="none", markersize=6, label=text)

    return [
        Line2D([], [], color=COLORS["range"], linewidth=7, label="models: worst–best"),
        Line2D([], [], color=COLORS["median"], linewidth=1.5, label="median model"),
        point(COLORS["above"], f"{_plain(human_label)}: above all models"),
        point(COLORS["within"], "within the range"),
        point(COLORS["below"], "below all models"),
        Line2D([], [], color=COLORS["within"], linewidth=1.2, marker="|", markersize=8, label="human 95% CI"),
    ]


def _label(row: Mapping[str, Any]) -> str:
    return _plain(f"{compact_task_name(row['task'])} [{row['language'].split('-')[0]}]")


def _plain(text: str) -> str:
    """Text for matplotlib: no mathtext (parse_math is off) and no control characters."""
    return "".join(char for char in str(text) if char.isprintable())
