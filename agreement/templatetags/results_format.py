"""Number formats of the comparison pages: scores ×100 with one decimal, as the HUME paper prints them."""
from __future__ import annotations

from django import template

from measures.results.subset_scores import compact_task_name

register = template.Library()


@register.filter
def score(value: float | None) -> str:
    """0.4583 → "45.8"; a missing score is an en dash, never "None"."""
    return "–" if value is None else f"{100 * value:.1f}"


@register.filter
def percent(value: float | None) -> str:
    """A ratio already in percent (model score as % of human): 164.5 → "165%"."""
    return "–" if value is None else f"{value:.0f}%"


@register.filter
def rate(value: float | None) -> str:
    """A share 0–1 as a whole percentage: 0.1538 → "15%"."""
    return "–" if value is None else f"{100 * value:.0f}%"


@register.filter
def number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{int(digits)}f}"


@register.filter
def language_short(code: str) -> str:
    """eng-Latn → eng (the paper's column headers)."""
    return code.split("-")[0] if code else ""


@register.filter
def ordinal(value: int | None) -> str:
    """4 → "4th" (the human's rank among models)."""
    if value is None:
        return "–"
    suffix = "th" if 10 <= value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
    return f"{value}{suffix}"


@register.filter
def short_name(name: str) -> str:
    """NovaSearch/jasper_en_vision_language_v1 → jasper_en_vision_language_v1 (the paper's names)."""
    return name.rsplit("/", 1)[-1] if name else ""


@register.filter
def web_url(value: object) -> str:
    """An imported model's reference link, only if it is http(s): a ``javascript:`` URL is dropped."""
    text = str(value or "")
    return text if text.startswith(("https://", "http://")) else ""


@register.filter
def task_label(task: str) -> str:
    """HUMETweetSentimentExtractionClassification → TweetSentimentExtraction (HUME Table 8's names)."""
    return compact_task_name(task or "")


RANKING_CHOICES = {"shared": {"rank_over": "shared"}, "all": {"rank_over": "all"}, "hume": {"reference": True},
                   "project": {"reference": False}}


@register.filter
def with_ranking(selection: object, choice: str) -> str:
    """The selection's query with one ranking choice changed: ``shared`` or ``all`` subsets, HUME's reference
    table (``hume``) or every row again (``project``); the leaderboard's one-click links."""
    return selection.with_choice(**RANKING_CHOICES[choice])  # type: ignore[attr-defined]
