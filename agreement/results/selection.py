"""What a results page shows: the reader's selection, the comparison it reads, and the page or its partial.

Every page reads the same query parameters, carried by every link and export so a download is what the
page shows: ``lang`` (repeated; default HUME's five languages), ``human`` (which human entry to compare)
and ``rev`` (repeated revision ids replacing a model's current revision). The numbers come from
``agreement/results/compare.py`` (which calls the pure ``table1.py``, ``per_task.py``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from agreement.results import compare as rc
from agreement.results.entries import PendingReport
from agreement.results.project import queue_missing_reports
from hume.lib.htmx import page_or_partial
from hume.roles import is_admin
from measures.results.subset_scores import HUME_LANGUAGES, short_task_name

TEMPLATES = "agreement/results"


@dataclass(frozen=True)
class Selection:
    """What the reader chose: languages, the human entry to compare, revisions other than current."""

    languages: list[str]
    available: list[str]
    human: str | None
    humans: list[str]
    revision_ids: list[int]
    rank_over: str = "shared"  # "all": rank only rows with every subset (table1.ranked_subsets)
    reference: bool = False  # HUME's own table: the imported models and human reference only

    def query(self, **extra: str) -> str:
        pairs = [("lang", code) for code in self.languages] + [("rev", str(pk)) for pk in self.revision_ids]
        if self.human:
            pairs.append(("human", self.human))
        if self.rank_over != "shared":
            pairs.append(("subsets", self.rank_over))
        if self.reference:
            pairs.append(("table", "hume"))
        pairs.extend(extra.items())
        return urlencode(pairs)

    def with_choice(self, **changes: Any) -> str:
        """The query of this selection with the ranking choice changed (the leaderboard's one-click links)."""
        return replace(self, **changes).query()

    @property
    def ranking(self) -> dict[str, Any]:
        return {"rank_over": self.rank_over, "reference": self.reference}


def comparison_for(request: HttpRequest) -> tuple[rc.Comparison, Selection]:
    """The comparison from stored reports; a mapped task with answers and no stored report gets its first
    report queued (a worker computes it; the page shows it as being computed and updates itself)."""
    revision_ids = [int(value) for value in request.GET.getlist("rev") if value.isdigit()]
    comparison = rc.build(revision_ids)
    for error in queue_missing_reports(comparison):
        messages.error(request, error)
    for warning in comparison.warnings:
        messages.warning(request, warning)
    available = sorted({score.language for score in comparison.scores})
    chosen = [code for code in request.GET.getlist("lang") if code in available]
    if request.GET.getlist("lang") and not chosen:
        messages.warning(request, "None of the chosen languages has scores; showing the default languages.")
    default = [code for code in HUME_LANGUAGES if code in available] or available
    humans = comparison.names("human")
    human = request.GET.get("human")
    reference = request.GET.get("table") == "hume"
    if reference:
        humans = [name for name in humans if comparison.entries[name].origin == "imported"] or humans
    default_human = comparison.default_human(chosen or default)
    if default_human not in humans:
        default_human = humans[0] if humans else None
    selection = Selection(languages=chosen or default, available=available,
                          human=human if human in humans else default_human, humans=humans,
                          revision_ids=revision_ids, rank_over="all" if request.GET.get("subsets") == "all" else
                          "shared", reference=reference)
    return comparison, selection


def render_page(request: HttpRequest, page: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """The full page, or its ``_partial`` for an htmx request (same view, same context)."""
    comparison = context.get("comparison")
    extra = {"is_admin": is_admin(request.user), **pending_context(comparison.pending if comparison else [])}
    return page_or_partial(request, f"{TEMPLATES}/{page}.html", f"{TEMPLATES}/_{page}_partial.html",
                           {**extra, **context}, status=status)


def pending_context(pending: list[PendingReport]) -> dict[str, Any]:
    return {"pending": pending, "pending_in_progress": any(report.in_progress for report in pending),
            "pending_query": urlencode([("task", report.task_id) for report in pending])}


def figure2_title(selection: Selection, task: str | None) -> str:
    what = short_task_name(task) if task else "every task"
    return f"{selection.human} within the range of model scores: {what} (HUME Figure 2)"
