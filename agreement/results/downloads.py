"""The results pages' numbers as files: Figure 2 (SVG, PNG), HUME Figures 1 and 12–16, Tables 2, 4–8 and
§5.1, the leaderboard (CSV, JSON, LaTeX) and the per-task table (CSV, JSON), each for the page's selection.
"""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.text import slugify

from agreement.results import compare as rc
from agreement.results import paper_tables
from agreement.results.page_access import researcher_required
from agreement.results.selection import comparison_for, figure2_title
from agreement.results.table_formats import table1_to_csv, table1_to_latex, to_json
from hume.lib.csv_safety import to_csv
from measures.results import figure2, paper_figures
from measures.results.subset_scores import short_task_name


@researcher_required
def plot(request: HttpRequest, fmt: str, task: str | None = None) -> HttpResponse:
    """Figure 2 as a download: SVG or PNG, for one task or all, with the page's selection."""
    if fmt not in ("svg", "png"):
        raise Http404("Plots are available as .svg and .png.")
    comparison, selection = comparison_for(request)
    if not selection.human:
        raise Http404("No human scores to plot.")
    rows = rc.figure_rows(comparison, selection.human, selection.languages, task=task)
    if task and not rows:
        raise Http404("No subset of this task in the chosen languages.")
    title = figure2_title(selection, task)
    if fmt == "png":
        response = HttpResponse(figure2.figure2_png(rows, title=title, human_label=selection.human),
                                content_type="image/png")
    else:
        response = HttpResponse(figure2.figure2_svg(rows, title=title, human_label=selection.human),
                                content_type="image/svg+xml; charset=utf-8")
    name = f"hume-figure2-{slugify(short_task_name(task)) if task else 'all-tasks'}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@researcher_required
def paper_table(request: HttpRequest, table: str, fmt: str) -> HttpResponse:
    """HUME Table 2, 4–7, 8 or §5.1 as CSV, JSON or LaTeX (as ``leaderboard --table``), for the selection."""
    if fmt not in ("csv", "json", "tex") or table not in paper_tables.DATASET_TABLES.keys() | {"2", "8", "5.1"}:
        raise Http404("Tables 2, 4-7, 8 and 5.1 export as .csv, .json and .tex.")
    comparison, selection = comparison_for(request)
    if not selection.human and table not in paper_tables.DATASET_TABLES:
        raise Http404("No human scores to tabulate.")
    data = rc.paper_table(comparison, table, selection.languages, selection.human or "")
    name = f"hume-table-{table}.{fmt}"
    if fmt == "csv":
        return _download(paper_tables.rows_to_csv(table, data), "text/csv", name)
    if fmt == "tex":
        return _download(paper_tables.rows_to_latex(table, data, caption=f"HUME table {table}"), "application/x-tex",
                         name)
    return _download(to_json(data), "application/json", name)


@researcher_required
def paper_figure(request: HttpRequest, number: str, fmt: str) -> HttpResponse:
    """HUME Figure 1 or 12–16 as SVG or PNG, with the page's selection (human entry, languages)."""
    if fmt not in ("svg", "png") or number not in paper_figures.FIGURES:
        raise Http404(f"Figures {', '.join(paper_figures.FIGURES)} are available as .svg and .png.")
    comparison, selection = comparison_for(request)
    if not selection.human:
        raise Http404("No human scores to plot.")
    data = rc.paper_figure(comparison, number, selection.human, selection.languages, **selection.ranking)
    drawing = paper_figures.render(data, fmt)
    content_type = "image/png" if fmt == "png" else "image/svg+xml; charset=utf-8"
    return HttpResponse(drawing, content_type=content_type)


@researcher_required
def export_leaderboard(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json", "tex"):
        raise Http404("The leaderboard exports as .csv, .json and .tex.")
    comparison, selection = comparison_for(request)
    rows = rc.leaderboard_rows(comparison, selection.languages, **selection.ranking)
    if fmt == "csv":
        return _download(table1_to_csv(rows), "text/csv", "leaderboard.csv")
    if fmt == "tex":
        caption = f"Humans, models and LLM annotators ({', '.join(selection.languages)})"
        return _download(table1_to_latex(rows, caption=caption, label="tab:leaderboard"), "application/x-tex",
                         "leaderboard.tex")
    return _download(to_json(rc.export_rows(rows)), "application/json", "leaderboard.json")


TASK_CSV_HEADER = ("task", "kind", "language", "n_items", "n_annotators", "human", "ci_low", "ci_high",
                   "ci_method", "agreement_metric", "agreement", "agreement_band", "low_agreement", "human_rank",
                   "n_models", "best_model", "best_score", "best_outside_ci", "best_pct_of_human",
                   "n_models_outside_ci")


@researcher_required
def export_tasks(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("The per-task table exports as .csv and .json.")
    comparison, selection = comparison_for(request)
    if not selection.human:
        raise Http404("No human scores to export.")
    rows = rc.per_task_rows(comparison, selection.human, selection.languages)
    if fmt == "csv":
        return _download(to_csv(TASK_CSV_HEADER, [_task_csv_row(row) for row in rows]), "text/csv",
                         "per-task.csv")
    document = {"human": selection.human, "languages": selection.languages, "tasks": rows,
                "win_rates": rc.win_rate_table(comparison, selection.human, selection.languages),
                "llm_correlations": rc.llm_correlations(comparison, selection.human, selection.languages)}
    return _download(to_json(document), "application/json", "per-task.json")


def _task_csv_row(row: dict[str, Any]) -> list[Any]:
    best = row["best_model"] or {}
    low, high = row["ci"] or (None, None)
    return [row["task"], row["kind"], row["language"], row["n_items"], row["n_annotators"], _x100(row["human"]),
            _x100(low), _x100(high), row["ci_method"], row["agreement_metric"], _round(row["agreement"], 3),
            row["band"], row["low_agreement"], row["human_rank"], row["n_models"], best.get("name"),
            _x100(best.get("score")), best.get("outside_ci"), _round(best.get("pct_of_human"), 1),
            row["n_outside_ci"]]


def _x100(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def _round(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _download(content: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
