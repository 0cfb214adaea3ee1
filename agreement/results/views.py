"""The comparison pages: HUME Table 1 with win rates and LLM correlation, Table 8 and Figure 2 for all
tasks and for one, and the part of a page that waits for reports being computed.

Researchers and admins read them (page_access.py). The selection and the comparison come from selection.py,
the downloads of the same numbers from downloads.py, the admins' import and mapping pages from admin_pages.py;
views only pick and arrange the numbers.
"""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from agreement.results import compare as rc
from agreement.results.entries import PROJECT_HUMANS
from agreement.results.models import ResultScore
from agreement.results.page_access import researcher_required
from agreement.results.project import pending_reports
from agreement.results.selection import (
    TEMPLATES,
    Selection,
    comparison_for,
    figure2_title,
    pending_context,
    render_page,
)
from hume.lib.htmx import vary, wants_partial
from measures.results import figure2, paper_figures
from measures.results.subset_scores import short_task_name


@researcher_required
def pending(request: HttpRequest) -> HttpResponse:
    """The part of a page that waits for reports being computed; it polls itself while any is queued or
    running (as the report page's status part does), then reloads the page once to show the scores."""
    ids = [int(value) for value in request.GET.getlist("task") if value.isdigit()]
    if not wants_partial(request):
        return redirect("results:leaderboard")
    context = pending_context(pending_reports(ids))
    response = render(request, f"{TEMPLATES}/_pending_partial.html", context)
    if not context["pending_in_progress"]:
        response["HX-Refresh"] = "true"  # the numbers are in (or a run failed): reload the whole page once
    return vary(response)


# ---------------------------------------------------------------------------------------------
# HUME Table 1, win rates, LLM correlation


@researcher_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    comparison, selection = comparison_for(request)
    rows = rc.leaderboard_rows(comparison, selection.languages, **selection.ranking)
    context = {"selection": selection, "comparison": comparison, **_table1_layout(rows),
               "ranking": rc.ranking_summary(comparison, selection.languages, rows, **selection.ranking),
               "figure_1": _figure_1(rows, selection)}
    if selection.human:
        context["win_rates"] = _win_rate_rows(rc.win_rate_table(comparison, selection.human, selection.languages))
        context["llm_correlations"] = rc.llm_correlations(comparison, selection.human, selection.languages)
        context["human_row"] = next((row for row in rows if row["name"] == selection.human), None)
        context["ranked_humans"] = [row for row in rows if row["agent"] == "human" and row["rank_among_models"]
                                    and row["name"] != selection.human]
        context["best_model"] = next((row for row in rows if row["agent"] == "model" and row["rank"]), None)
        context["n_models"] = sum(row["agent"] == "model" for row in rows)
        context["n_ranked_models"] = sum(row["agent"] == "model" and row["rank"] is not None for row in rows)
        context["paper_figures"] = paper_figures.TITLES.items()
        context["paper_tables"] = ("2", "4", "5", "6", "7", "8", "5.1")
        if PROJECT_HUMANS in selection.humans and selection.human != PROJECT_HUMANS:
            context["project_humans_query"] = selection.with_choice(human=PROJECT_HUMANS)
    return render_page(request, "leaderboard", context)


def _figure_1(rows: list[dict[str, Any]], selection: Selection) -> str | None:
    """HUME Figure 1 (overall score per ranked row) as an inline SVG, when two or more rows are ranked."""
    data = paper_figures.figure_1(rows)
    if len(data["bars"]) < 2:
        return None
    return figure2.page_svg(str(paper_figures.render(data, "svg")), data["title"])


def _table1_layout(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Header groups, and per cell whether it is the best of all (bold) or the best model (underline)."""
    columns = list(rows[0]["columns"]) if rows else []
    kinds = [column.split("/")[0] for column in columns]
    best = {c: max((r["columns"][c] for r in rows if r["columns"][c] is not None), default=None) for c in columns}
    best_model = {c: max((r["columns"][c] for r in rows if r["agent"] == "model" and r["columns"][c] is not None),
                         default=None) for c in columns}
    for row in rows:
        row["cells"] = [{"value": row["columns"][c], "best": row["columns"][c] is not None
                         and row["columns"][c] == best[c], "best_model": row["agent"] == "model"
                         and row["columns"][c] is not None and row["columns"][c] == best_model[c]}
                        for c in columns]
    return {"rows": rows, "columns": columns, "languages_header": [c.split("/")[1] for c in columns],
            "kinds_header": [(kind, kinds.count(kind)) for kind in dict.fromkeys(kinds)]}


def _win_rate_rows(rates: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [{"group": "overall", "label": "all subsets", **rates["overall"]}]
    for group, label in (("by_kind", "kind"), ("by_language", "language"), ("by_scope", "scope")):
        rows += [{"group": label, "label": name, **value} for name, value in rates[group].items()]
    return rows


# ---------------------------------------------------------------------------------------------
# HUME Table 8 and Figure 2, for all tasks and for one


@researcher_required
def tasks(request: HttpRequest) -> HttpResponse:
    comparison, selection = comparison_for(request)
    context: dict[str, Any] = {"selection": selection, "comparison": comparison}
    if selection.human:
        rows = rc.per_task_rows(comparison, selection.human, selection.languages)
        context["rows"] = rows
        context["n_outside"] = sum(bool(row["best_model"] and row["best_model"]["outside_ci"]) for row in rows)
        context["figure"] = figure2.figure2_inline_svg(
            rc.figure_rows(comparison, selection.human, selection.languages), title=figure2_title(selection, None),
            human_label=selection.human)
    return render_page(request, "tasks", context)


@researcher_required
def task_detail(request: HttpRequest, task: str) -> HttpResponse:
    comparison, selection = comparison_for(request)
    if task not in {score.task for score in comparison.scores} | {row["mteb_task_name"] for row in comparison.mappings}:
        raise Http404("No imported or project scores for this MTEB task.")
    context: dict[str, Any] = {"selection": selection, "comparison": comparison, "task": task,
                               "short_task": short_task_name(task), "kind": comparison.kinds.get(task),
                               "mappings": _task_mappings(comparison, task),
                               "comparison_llms": comparison.names("llm")}
    if selection.human:
        rows = rc.per_task_rows(comparison, selection.human, selection.languages, against=("model", "llm"))
        context["rows"] = [row for row in rows if row["task"] == task]
        figure_rows = rc.figure_rows(comparison, selection.human, selection.languages, task=task)
        context["figure"] = figure2.figure2_inline_svg(figure_rows, title=figure2_title(selection, task),
                                                     human_label=selection.human) if figure_rows else None
    return render_page(request, "task_detail", context)


def _task_mappings(comparison: rc.Comparison, task: str) -> dict[str, Any]:
    """Which project tasks feed this MTEB task, and which hf_subset each imported language is."""
    subsets = sorted({(subset, "+".join(languages)) for subset, languages in ResultScore.objects.filter(
        mteb_task_name=task, revision__annotator_id="").values_list("hf_subset", "languages")})
    project = [row for row in comparison.mappings if row["mteb_task_name"] == task]
    known = {subset for subset, _ in subsets}
    for row in project:
        row["subset_known"] = not row["mteb_subset"] or not known or row["mteb_subset"] in known
    return {"project": project, "imported": subsets}
