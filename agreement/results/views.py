"""Pages comparing humans with models: HUME Table 1, Table 8, Figure 2, win rates; import and mapping.

Researchers and admins read; only admins import, pick a current revision or edit a task's MTEB mapping.
Every page reads the same query parameters, carried by every link and export so a download is what the
page shows: ``lang`` (repeated; default HUME's five languages), ``human`` (which human entry to compare)
and ``rev`` (repeated revision ids replacing a model's current revision). The numbers come from
``agreement/results/compare.py`` (which calls the pure ``table1.py``, ``per_task.py``, ...); views only pick
and arrange them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from agreement.results import compare as rc
from agreement.results import figure2, paper_figures, paper_tables
from agreement.results.entries import PendingReport
from agreement.results.models import ResultModel, ResultRevision, ResultScore
from agreement.results.mteb_files import ResultsImportError, ResultsImportErrors
from agreement.results.project import pending_reports, queue_missing_reports
from agreement.results.results_import import (
    MAX_UPLOAD_BYTES,
    UploadLimit,
    import_upload,
    set_current,
    unpin_current,
    upload_too_large,
)
from agreement.results.subset_scores import HUME_LANGUAGES, short_task_name
from agreement.results.table_formats import table1_to_csv, table1_to_latex, to_json
from hume.roles import is_admin, is_researcher
from tasks_app.csv_safety import to_csv
from tasks_app.models import Task

TEMPLATES = "agreement/results"


# ---------------------------------------------------------------------------------------------
# Access and selection


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Logged in and a researcher or admin (annotators never see model scores or gold-derived numbers)."""
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_researcher(request.user):
            raise PermissionDenied("Model comparisons are for researchers and admins.")
        return view(request, *args, **kwargs)

    return wrapped


def require_admin(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("Only admins may change imported results or mappings.")


def get_revision_for_admin(request: HttpRequest, pk: int) -> ResultRevision:
    """The access helper for revisions: admins only, and never a single annotator's folder."""
    require_admin(request)
    return get_object_or_404(ResultRevision.objects.select_related("model"), pk=pk, annotator_id="")


def get_task_for_admin(request: HttpRequest, pk: int) -> Task:
    require_admin(request)
    return get_object_or_404(Task, pk=pk)


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


def _comparison(request: HttpRequest) -> tuple[rc.Comparison, Selection]:
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
    default_human = comparison.default_human()
    if default_human not in humans:
        default_human = humans[0] if humans else None
    selection = Selection(languages=chosen or default, available=available,
                          human=human if human in humans else default_human, humans=humans,
                          revision_ids=revision_ids, rank_over="all" if request.GET.get("subsets") == "all" else
                          "shared", reference=reference)
    return comparison, selection


def _render(request: HttpRequest, page: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """The full page, or its ``_partial`` for an htmx request (same view, same context)."""
    name = f"{TEMPLATES}/_{page}_partial.html" if request.htmx else f"{TEMPLATES}/{page}.html"
    comparison = context.get("comparison")
    extra = {"is_admin": is_admin(request.user), **_pending_context(comparison.pending if comparison else [])}
    response = render(request, name, {**extra, **context}, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _pending_context(pending: list[PendingReport]) -> dict[str, Any]:
    return {"pending": pending, "pending_in_progress": any(report.in_progress for report in pending),
            "pending_query": urlencode([("task", report.task_id) for report in pending])}


@researcher_required
def pending(request: HttpRequest) -> HttpResponse:
    """The part of a page that waits for reports being computed; it polls itself while any is queued or
    running (as the report page's status part does), then reloads the page once to show the scores."""
    ids = [int(value) for value in request.GET.getlist("task") if value.isdigit()]
    if not request.htmx:
        return redirect("results:leaderboard")
    context = _pending_context(pending_reports(ids))
    response = render(request, f"{TEMPLATES}/_pending_partial.html", context)
    if not context["pending_in_progress"]:
        response["HX-Refresh"] = "true"  # the numbers are in (or a run failed): reload the whole page once
    patch_vary_headers(response, ["HX-Request"])
    return response


# ---------------------------------------------------------------------------------------------
# HUME Table 1, win rates, LLM correlation


@researcher_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    comparison, selection = _comparison(request)
    rows = rc.leaderboard_rows(comparison, selection.languages, **selection.ranking)
    context = {"selection": selection, "comparison": comparison, **_table1_layout(rows),
               "ranking": rc.ranking_summary(comparison, selection.languages, rows, **selection.ranking),
               "figure_1": _figure_1(rows, selection)}
    if selection.human:
        context["win_rates"] = _win_rate_rows(rc.win_rate_table(comparison, selection.human, selection.languages))
        context["llm_correlations"] = rc.llm_correlations(comparison, selection.human, selection.languages)
        context["human_row"] = next((row for row in rows if row["name"] == selection.human), None)
        context["ranked_humans"] = [row for row in rows if row["kind"] == "human" and row["rank_among_models"]
                                    and row["name"] != selection.human]
        context["best_model"] = next((row for row in rows if row["kind"] == "model" and row["rank"]), None)
        context["n_models"] = sum(row["kind"] == "model" for row in rows)
        context["n_ranked_models"] = sum(row["kind"] == "model" and row["rank"] is not None for row in rows)
        context["paper_figures"] = paper_figures.TITLES.items()
        context["paper_tables"] = ("2", "4", "5", "6", "7", "8", "5.1")
    return _render(request, "leaderboard", context)


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
    best_model = {c: max((r["columns"][c] for r in rows if r["kind"] == "model" and r["columns"][c] is not None),
                         default=None) for c in columns}
    for row in rows:
        row["cells"] = [{"value": row["columns"][c], "best": row["columns"][c] is not None
                         and row["columns"][c] == best[c], "best_model": row["kind"] == "model"
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
    comparison, selection = _comparison(request)
    context: dict[str, Any] = {"selection": selection, "comparison": comparison}
    if selection.human:
        rows = rc.per_task_rows(comparison, selection.human, selection.languages)
        context["rows"] = rows
        context["n_outside"] = sum(bool(row["best_model"] and row["best_model"]["outside_ci"]) for row in rows)
        context["figure"] = figure2.figure2_inline_svg(
            rc.figure_rows(comparison, selection.human, selection.languages), title=_plot_title(selection, None),
            human_label=selection.human)
    return _render(request, "tasks", context)


@researcher_required
def task_detail(request: HttpRequest, task: str) -> HttpResponse:
    comparison, selection = _comparison(request)
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
        context["figure"] = figure2.figure2_inline_svg(figure_rows, title=_plot_title(selection, task),
                                                     human_label=selection.human) if figure_rows else None
    return _render(request, "task_detail", context)


def _task_mappings(comparison: rc.Comparison, task: str) -> dict[str, Any]:
    """Which project tasks feed this MTEB task, and which hf_subset each imported language is."""
    subsets = sorted({(subset, "+".join(languages)) for subset, languages in ResultScore.objects.filter(
        mteb_task_name=task, revision__annotator_id="").values_list("hf_subset", "languages")})
    project = [row for row in comparison.mappings if row["mteb_task_name"] == task]
    known = {subset for subset, _ in subsets}
    for row in project:
        row["subset_known"] = not row["mteb_subset"] or not known or row["mteb_subset"] in known
    return {"project": project, "imported": subsets}


def _plot_title(selection: Selection, task: str | None) -> str:
    what = short_task_name(task) if task else "every task"
    return f"{selection.human} within the range of model scores: {what} (HUME Figure 2)"


@researcher_required
def plot(request: HttpRequest, fmt: str, task: str | None = None) -> HttpResponse:
    """Figure 2 as a download: SVG or PNG, for one task or all, with the page's selection."""
    if fmt not in ("svg", "png"):
        raise Http404("Plots are available as .svg and .png.")
    comparison, selection = _comparison(request)
    if not selection.human:
        raise Http404("No human scores to plot.")
    rows = rc.figure_rows(comparison, selection.human, selection.languages, task=task)
    if task and not rows:
        raise Http404("No subset of this task in the chosen languages.")
    title = _plot_title(selection, task)
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
    comparison, selection = _comparison(request)
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
    comparison, selection = _comparison(request)
    if not selection.human:
        raise Http404("No human scores to plot.")
    data = rc.paper_figure(comparison, number, selection.human, selection.languages, **selection.ranking)
    drawing = paper_figures.render(data, fmt)
    content_type = "image/png" if fmt == "png" else "image/svg+xml; charset=utf-8"
    return HttpResponse(drawing, content_type=content_type)


# ---------------------------------------------------------------------------------------------
# Exports


@researcher_required
def export_leaderboard(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json", "tex"):
        raise Http404("The leaderboard exports as .csv, .json and .tex.")
    comparison, selection = _comparison(request)
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
    comparison, selection = _comparison(request)
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


# ---------------------------------------------------------------------------------------------
# Import (admins), models and revisions, task mapping


@csrf_exempt  # the size is checked before the body is read; CSRF is then checked by _import_post
@login_required
def import_page(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    if request.method != "POST":
        return render(request, f"{TEMPLATES}/import.html", _import_context())  # only admins get here
    request.upload_handlers.insert(0, UploadLimit(request))
    too_large = upload_too_large(request)
    if too_large:
        context = _import_context(errors=[too_large])
        return render(request, f"{TEMPLATES}/import.html", context, status=413)
    return _import_post(request)


import_page.checks_own_upload_size = True  # RESULTS_MAX_UPLOAD_BYTES (hume/upload_limit.py)


@csrf_protect
def _import_post(request: HttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    if upload is None:
        return render(request, f"{TEMPLATES}/import.html", _import_context(errors=["Choose a file to upload."]),
                      status=400)
    try:
        summary = import_upload(upload.name or "upload", upload, upload.size or 0,
                                model_name=request.POST.get("model_name", "").strip() or None,
                                revision=request.POST.get("revision", "").strip() or None)
    except ResultsImportError as exc:
        errors = [str(error) for error in exc.errors] if isinstance(exc, ResultsImportErrors) else [str(exc)]
        return render(request, f"{TEMPLATES}/import.html", _import_context(errors=errors, failed=upload.name),
                      status=400)
    messages.success(request, f"Imported {summary.message}")
    return redirect("results:models")


def _import_context(errors: Sequence[str] = (), failed: str | None = None) -> dict[str, Any]:
    return {"errors": list(errors), "failed": failed, "max_mb": MAX_UPLOAD_BYTES // (1024 * 1024), "is_admin": True,
            "n_models": ResultModel.objects.count(), "n_scores": ResultScore.objects.count()}


@researcher_required
def models(request: HttpRequest) -> HttpResponse:
    revisions = ResultRevision.objects.select_related("model").order_by("model__name", "annotator_id", "revision")
    grouped: dict[int, dict[str, Any]] = {}
    for revision in revisions:
        entry = grouped.setdefault(revision.model_id, {"model": revision.model, "revisions": [], "annotators": []})
        entry["annotators" if revision.annotator_id else "revisions"].append(revision)
    return render(request, f"{TEMPLATES}/models.html",
                  {"models": list(grouped.values()), "is_admin": is_admin(request.user)})


@login_required
@require_POST
def make_current(request: HttpRequest, pk: int) -> HttpResponse:
    revision = get_revision_for_admin(request, pk)
    set_current(revision)
    messages.success(request, f"{revision.model.name}: revision {revision.revision} is now current (pinned).")
    return redirect("results:models")


@login_required
@require_POST
def unpin(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    model = get_object_or_404(ResultModel, pk=pk)
    revision = unpin_current(model)
    messages.success(request, f"{model.name}: the rule picks the current revision again "
                              f"({revision.revision if revision else 'none'}).")
    return redirect("results:models")


@researcher_required
def mapping(request: HttpRequest) -> HttpResponse:
    """Which project task is which MTEB task and subset; admins edit it here (or in the Django admin)."""
    imported = ResultScore.objects.filter(revision__annotator_id="").order_by()
    context = {"tasks": Task.objects.order_by("name"), "is_admin": is_admin(request.user),
               "mteb_tasks": sorted(set(imported.values_list("mteb_task_name", flat=True))),
               "mteb_subsets": sorted(set(imported.values_list("hf_subset", flat=True)))}
    return render(request, f"{TEMPLATES}/mapping.html", context)


@login_required
@require_POST
def edit_mapping(request: HttpRequest, pk: int) -> HttpResponse:
    task = get_task_for_admin(request, pk)
    name = request.POST.get("mteb_task_name", "").strip()
    subset = request.POST.get("mteb_subset", "").strip()
    if len(name) > 200 or len(subset) > 100:
        messages.error(request, f"{task.name}: the MTEB task name (200) or subset (100 characters) is too long.")
        return redirect("results:mapping")
    task.mteb_task_name, task.mteb_subset = name, subset
    task.save(update_fields=["mteb_task_name", "mteb_subset", "updated_at"])
    shown = f"{name} / {subset or 'any subset'}" if name else "no MTEB task"
    messages.success(request, f"{task.name} now maps to {shown}.")
    return redirect("results:mapping")
