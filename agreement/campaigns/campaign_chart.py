"""A campaign's sequence drawn over labels (the campaign page, docs/campaigns.md "The pages"): the estimate and
its interval at every look, as an inline SVG of plain elements and presentation attributes (no script, no inline
CSS, so it obeys the app's Content-Security-Policy).

The looks are the ones the campaign's last review computed (measures/campaign/engine.py `Review.looks`, kept in
the stored review): the worker draws up the sequence, the page only draws it.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from agreement.campaigns.models import Campaign

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 40


@dataclass(frozen=True)
class Look:
    """The sequence after `labels` human labels."""

    labels: int
    estimate: float
    low: float
    high: float


def sequence_looks(campaign: Campaign) -> list[Look]:
    """The sequence at every look up to the one the campaign's last review counted ([] before a review)."""
    return [Look(int(labels), float(estimate), float(low), float(high))
            for labels, estimate, low, high in (campaign.review or {}).get("looks", ())]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    step = (high - low) / (count - 1) if high > low else 1.0
    return [low + i * step for i in range(count)]


def sequence_svg(looks: list[Look], target_half_width: float, title: str) -> str:
    """The looks as an SVG: the interval a shaded band, the estimate a line, the last look's target
    (estimate ± target) two dashed lines; '' without a look."""
    if not looks:
        return ""
    max_labels = max(look.labels for look in looks)
    last = looks[-1]
    y_low = min(min(look.low for look in looks), last.estimate - target_half_width)
    y_high = max(max(look.high for look in looks), last.estimate + target_half_width)
    if y_high <= y_low:
        y_high = y_low + 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(labels: float) -> float:
        return LEFT + plot_w * (labels / max_labels if max_labels else 0.0)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - (value - y_low) / (y_high - y_low))

    band = [f"{x(look.labels):.1f},{y(look.high):.1f}" for look in looks]
    band += [f"{x(look.labels):.1f},{y(look.low):.1f}" for look in reversed(looks)]
    line = " ".join(f"{x(look.labels):.1f},{y(look.estimate):.1f}" for look in looks)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="campaign-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="100%" role="img" aria-labelledby="campaign-chart-title">',
             f'<title id="campaign-chart-title">{escape(title)}</title>',
             f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="#5b6475"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#5b6475"/>']
    for value in _ticks(y_low, y_high):
        parts.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="#5b6475">{value:.3g}</text>')
    for labels in _ticks(0, max_labels):
        parts.append(f'<text x="{x(labels):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" font-size="11" '
                     f'fill="#5b6475">{labels:.0f}</text>')
    parts.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12" '
                 'fill="#1f2430">human labels used</text>')
    parts.append(f'<polygon class="interval" points="{" ".join(band)}" fill="#2456c7" fill-opacity="0.18"/>')
    for edge in (last.estimate - target_half_width, last.estimate + target_half_width):
        parts.append(f'<line class="target" x1="{LEFT}" y1="{y(edge):.1f}" x2="{LEFT + plot_w}" y2="{y(edge):.1f}" '
                     'stroke="#b7791f" stroke-dasharray="4 3"/>')
    parts.append(f'<polyline class="estimate" points="{line}" fill="none" stroke="#2456c7" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)
