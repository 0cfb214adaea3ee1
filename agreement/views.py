"""Report pages for researchers: the list of tasks, one task's report, its item-level disagreement view,
the recompute button with htmx progress, and the downloads.

Views only read stored reports (metrics are computed by the worker or the CLI, never here). Every view goes
through `report_task`, the one access helper: researchers and admins only, annotators get 403.
"""
from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models.functions import Lower
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from agreement.core.mteb_export import ExportError, results_zip
from agreement.core.report_document import ReportDocument
from agreement.core.report_exports import answer_lines, ordered, report_csv, report_json
from agreement.core.reports import ReportQueueError, request_first_report, request_report, requeue_if_dead
from agreement.core.scoring import aggregated_kinds, check_aggregation
from agreement.model_runs.rows import rows_context
from agreement.models import Report
from agreement.ppi.page import ppi_context
from agreement.report_charts import available, chart_svg
from annotation.models import Annotation
from hume.lib.htmx import vary, wants_partial
from hume.listing import search_and_sort
from hume.roles import RESEARCHER, require_role
from kinds.forms import excerpt
from measures.annotator_models import METHODS as MODEL_ORDER
from measures.annotator_models import UnknownAggregation
from tasks_app.core.kinds import KINDS
from tasks_app.models import Item, ItemGold, Task

ITEMS_PER_PAGE = 20
SORTS = ("among", "gold")
REPORT_SORTS = {"name": (Lower("name"),), "kind": ("kind", Lower("name")), "language": ("language", Lower("name")),
                "status": ("agreement_report__status", Lower("name")),
                "computed": ("agreement_report__computed_at", Lower("name"))}
# Reading order of an item's fields (the database returns JSON keys in its own order).
PAYLOAD_ORDER = ("context", "query", "instruction", "text", "sentence1", "sentence2", "a", "b", "sentences",
                 "candidates", "documents")



def report_task(request: HttpRequest, task_id: int) -> tuple[Task, Report | None]:
    """The task and its report row for a researcher; 403 for anyone else, 404 for an unknown task."""
    require_role(request.user, RESEARCHER, "Reports are for researchers and admins.")
    task = get_object_or_404(Task, pk=task_id)
    return task, Report.objects.filter(task=task).first()


@login_required
@require_GET
def report_list(request: HttpRequest) -> HttpResponse:
    """Every task with its report status and headline numbers, read from JSON keys (not whole reports)."""
    require_role(request.user, RESEARCHER, "Reports are for researchers and admins.")
    headline = {row["task_id"]: row for row in Report.objects.values(
        "task_id", "status", "error", "computed_at", "result__human__main_metric", "result__human__main_score",
        "result__human__ci_low", "result__human__ci_high", "result__agreement", "result__agreement_bands",
        "result__flags__low_agreement", "result__agreement_main", "result__n_items", "result__n_annotators",
        "result__n_skipped", "result__n_flagged")}
    tasks, listing = search_and_sort(request, Task.objects.all(), search=("name", "kind", "language", "mteb_task_name"),
                                     sorts=REPORT_SORTS, default="name")
    rows = [{"task": task, **summary_numbers(headline.get(task.pk))} for task in tasks]
    return render(request, "agreement/report_list.html", {"rows": rows, "listing": listing})


def summary_numbers(row: dict[str, Any] | None) -> dict[str, Any]:
    """Status and headline of one report row: human score with CI, the first defined agreement value."""
    if row is None:
        return {"status": "not computed"}
    agreement = row["result__agreement"] or {}
    name = row["result__agreement_main"]
    first = (name, agreement.get(name)) if name else (None, None)
    return {
        "status": row["status"], "error": row["error"], "computed_at": row["computed_at"],
        "main_metric": row["result__human__main_metric"], "main_score": row["result__human__main_score"],
        "ci_low": row["result__human__ci_low"], "ci_high": row["result__human__ci_high"],
        "agreement_name": first[0], "agreement_value": first[1],
        "agreement_band": (row["result__agreement_bands"] or {}).get(first[0]),
        "low_agreement": row["result__flags__low_agreement"], "n_items": row["result__n_items"],
        "n_annotators": row["result__n_annotators"], "n_skipped": row["result__n_skipped"],
        "n_flagged": row["result__n_flagged"],
    }


@login_required
@require_GET
def report_detail(request: HttpRequest, task_id: int) -> HttpResponse:
    """One task's report; htmx requests for another page or order of items get only that fragment."""
    task, report = report_task(request, task_id)
    error = None
    if report is None and Annotation.objects.filter(item__task=task).exists():
        # Answers but no report (a bulk import sends no signal): queue the first one for a worker and show
        # it as queued; the status part polls itself until it is done. Never computed here.
        try:
            request_first_report(task.pk)
        except ReportQueueError as exc:
            error = str(exc)
        report = Report.objects.filter(task=task).first()
    doc = report.result if report and report.result else None
    context = {"task": task, "report": report, "doc": doc, "error": error,
               **disagreement_context(request, task, doc), **aggregation_context(task)}
    context |= rows_context(task.pk, request.user)
    context |= ppi_context(task, request.user)
    if doc and report.status == Report.Status.DONE:
        # Bulk imports send no signals; a count (one indexed query) tells when answers came in since.
        context["answers_now"] = Annotation.objects.counted().filter(item__task=task).count()
    if doc:
        context |= annotator_tables(doc)
        context["charts"] = available(doc)
    if wants_partial(request) and request.GET.get("fragment") == "items":
        return vary(render(request, "agreement/_disagreement_partial.html", context))
    return vary(render(request, "agreement/report_detail.html", context))


def annotator_tables(doc: ReportDocument) -> dict[str, Any]:
    """Humans and LLM annotators apart, each row with one cell per score name; parts per batch/language."""
    def table(people: list[dict[str, Any]]) -> dict[str, Any]:
        columns = list(dict.fromkeys(name for person in people for name in person["scores"]))
        return {"columns": columns,
                "rows": [{**person, "cells": [person["scores"].get(c) for c in columns]} for person in people]}

    return {
        "humans": table([a for a in doc["annotators"] if a["agent"] != "llm"]),
        "llms": table([a for a in doc["annotators"] if a["agent"] == "llm"]),
        "agreement_rows": [{"name": name, "value": value, "band": doc["agreement_bands"].get(name),
                            "note": doc["agreement_notes"].get(name), "main": name == doc.get("agreement_main")}
                           for name, value in ordered(doc, ("agreement_main",))["agreement"].items()],
        "human_scores": list(doc["human"]["scores"].items()),
        "parts": [{"scope": "batch", "name": p["batch"], **part_summary(p)} for p in doc.get("by_batch", [])]
        + [{"scope": "language", "name": p["language"], **part_summary(p)} for p in doc.get("by_language", [])],
    }


def part_summary(part: dict[str, Any]) -> dict[str, Any]:
    main = part.get("agreement_main")
    agreement = (main, part["agreement"].get(main)) if main else (None, None)
    return {"n_items": part["n_items"], "n_annotators": part["n_annotators"], "n_skipped": part["n_skipped"],
            "agreement_name": agreement[0], "agreement_value": agreement[1],
            "agreement_band": part["agreement_bands"].get(agreement[0]), "human": part["human"],
            "low_agreement": part["flags"]["low_agreement"]}


def disagreement_context(request: HttpRequest, task: Task, doc: ReportDocument | None) -> dict[str, Any]:
    """One page of the most disagreed items, with their text, gold and every annotator's answer; an excluded
    annotator's answer is shown marked (`excluded`): the item's numbers were computed without it."""
    sort = request.GET.get("sort") if request.GET.get("sort") in SORTS else "among"
    rows = list(doc["disagreement"]) if doc else []
    if sort == "gold":
        rows.sort(key=lambda r: -1.0 if r["gold_disagreement"] is None else r["gold_disagreement"], reverse=True)
    page = Paginator(rows, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    keys = [row["item"] for row in page.object_list]
    payloads = dict(Item.objects.filter(task=task, external_id__in=keys).values_list("external_id", "payload"))
    gold = dict(ItemGold.objects.filter(item__task=task, item__external_id__in=keys)
                .values_list("item__external_id", "value"))
    answers: dict[str, list[dict[str, Any]]] = {key: [] for key in keys}
    for key, name, agent, value, skipped, reason, flagged, comment, excluded in (
            Annotation.objects.marked().filter(item__task=task, item__external_id__in=keys)
            .order_by("annotator__user__username")
            .values_list("item__external_id", "annotator__user__username", "annotator__agent", "value", "skipped",
                         "skip_reason", "flagged", "flag_comment", "excluded")):
        answers[key].append({"name": name, "agent": agent, "value": "skipped" if skipped else compact(value),
                             "skip_reason": reason, "flagged": flagged, "comment": comment, "excluded": excluded})
    items = [{**row, "parts": payload_parts(payloads.get(row["item"], {})), "answers": answers[row["item"]],
              "gold": compact(gold[row["item"]]) if row["item"] in gold else None} for row in page.object_list]
    return {"items": items, "page": page, "sort": sort}


def compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def payload_parts(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """An item's texts as (field, text) pairs, whatever the kind: strings, lists of texts, candidates."""
    parts: list[tuple[str, str]] = []
    fields = sorted(payload, key=lambda f: (PAYLOAD_ORDER.index(f) if f in PAYLOAD_ORDER else len(PAYLOAD_ORDER), f))
    for field, value in ((f, payload[f]) for f in fields):
        if isinstance(value, str):
            parts.append((field, value))
        elif isinstance(value, list):
            for index, entry in enumerate(value, start=1):
                if isinstance(entry, dict):
                    parts.append((f"{field} {entry.get('id', index)}", str(entry.get("text", ""))))
                else:
                    parts.append((f"{field} {index}", str(entry)))
    return parts


@login_required
@require_GET
def annotator_models(request: HttpRequest, task_id: int) -> HttpResponse:
    """The quality page: each annotator model's skill and spam scores per annotator, read from the stored report
    (computed by the worker; docs/reports.md, "Annotator models"). Researchers and admins only."""
    task, report = report_task(request, task_id)
    doc = report.result if report and report.result else None
    block = (doc or {}).get("annotator_models")
    spread = (block or {}).get("answer_spread") or {}
    flagged = {row["name"] for row in spread.get("annotators", []) if row["straightlining"]}
    models = []
    for method, model in ((block or {}).get("models") or {}).items():
        annotators = [{**a, "straightlining": a["name"] in flagged} for a in model["annotators"]]
        models.append({"method": method, **model,
                       "annotators": sorted(annotators, key=lambda a: (a["skill"] is None, a["skill"] or 0))})
    models.sort(key=lambda model: MODEL_ORDER.index(model["method"]) if model["method"] in MODEL_ORDER else 99)
    spread_rows = sorted(spread.get("annotators", []), key=lambda row: -row["modal_share"])
    context = {"task": task, "report": report, "doc": doc, "models_block": block, "models": models,
               "labelled": task.kind_definition.aggregates_labels, "spread": spread, "spread_rows": spread_rows,
               "labelled_kinds": [f"{kind.label} (one per {kind.label_unit.rstrip('s')})"
                                  for kind in KINDS.values() if kind.aggregates_labels]}
    return render(request, "agreement/annotator_models.html", context)


@login_required
@require_GET
def report_status(request: HttpRequest, task_id: int) -> HttpResponse:
    """The status fragment the page polls while a report is queued or running."""
    task, report = report_task(request, task_id)
    if not wants_partial(request):
        return redirect("agreement:detail", task_id=task.pk)
    report = requeue_if_dead(report)  # a run whose worker died is queued again, not watched forever
    response = render(request, "agreement/_status_partial.html", {"task": task, "report": report,
                                                                   **aggregation_context(task)})
    if report and report.status == Report.Status.DONE and request.GET.get("was") in ("queued", "running"):
        response["HX-Refresh"] = "true"  # the new numbers are in: reload the whole page once
    return vary(response)


AGGREGATION_TITLES = {"majority": "majority vote (HUME)", "dawid-skene": "Dawid-Skene", "one-coin": "one-coin",
                      "glad": "GLAD", "mace": "MACE"}


def aggregation_context(task: Task) -> dict[str, Any]:
    """The Recompute form's aggregation choices (the `report --aggregation` names, docs/reports.md): for the kinds
    whose human is built from labels; none for the others (combined as HUME does)."""
    if task.kind not in aggregated_kinds():
        return {"aggregations": []}
    return {"aggregations": [(name, AGGREGATION_TITLES.get(name, name)) for name in MODEL_ORDER]}


@login_required
@require_POST
def recompute(request: HttpRequest, task_id: int) -> HttpResponse:
    """Queue the report, with the aggregation chosen (blank: the stored one); if the broker is down, say so (it
    is never computed inline instead). An aggregation the kind cannot take is refused and nothing is queued."""
    task, _ = report_task(request, task_id)
    error = None
    aggregation = request.POST.get("aggregation") or None
    try:
        if aggregation is not None:
            check_aggregation(task.kind, aggregation)
        report = request_report(task.pk, aggregation=aggregation)
    except UnknownAggregation as exc:
        error = f"Nothing was queued: {excerpt(str(exc), 300)}"
        report = Report.objects.filter(task=task).first()
    except ReportQueueError as exc:
        error = str(exc)
        report = Report.objects.filter(task=task).first()
    if not wants_partial(request):
        if error:
            messages.error(request, error)
        return redirect("agreement:detail", task_id=task.pk)
    # htmx swaps only 2xx responses, so the fragment carrying the error is sent with 200
    response = render(request, "agreement/_status_partial.html", {"task": task, "report": report, "error": error,
                                                                   **aggregation_context(task)})
    return vary(response)


def download(content: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def export_filename(task: Task, extension: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.name)
    return f"report-{safe}.{extension}"


@login_required
@require_GET
def export_report(request: HttpRequest, task_id: int, fmt: str) -> HttpResponse:
    """The stored report as CSV or JSON."""
    task, report = report_task(request, task_id)
    if not report or not report.result:
        return render(request, "agreement/report_detail.html", {"task": task, "report": report, "doc": None},
                      status=404)
    if fmt == "csv":
        return download(report_csv(report.result), export_filename(task, "csv"), "text/csv; charset=utf-8")
    return download(report_json(report.result), export_filename(task, "json"), "application/json")


@login_required
@require_GET
def export_answers(request: HttpRequest, task_id: int) -> StreamingHttpResponse:
    """Every raw answer of the task as JSONL in the annotation-import format, streamed."""
    task, _ = report_task(request, task_id)
    safe = export_filename(task, "jsonl").replace("report-", "answers-", 1)
    response = StreamingHttpResponse(answer_lines(task), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{safe}"'
    return response


@login_required
@require_GET
def report_chart(request: HttpRequest, task_id: int, name: str) -> HttpResponse:
    """One chart of the stored report as SVG (drawn from the report's chart data, never from live answers)."""
    task, report = report_task(request, task_id)
    doc = report.result if report and report.result else None
    if name not in {chart.name for chart in available(doc)}:
        raise Http404("This report has no such chart.")
    svg = chart_svg(doc, name, key=(task.pk, doc.get("inputs_digest"), str(report.computed_at)))
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Cache-Control"] = "private, no-cache"
    return response


@login_required
@require_GET
def export_mteb(request: HttpRequest, task_id: int) -> HttpResponse:
    """The task's human results as a zip of MTEB TaskResult files (what `export_mteb` writes), from the stored
    report: a page never computes one, so a task without a report goes to its report page, which queues one."""
    task, report = report_task(request, task_id)
    if not report or not report.result:
        messages.info(request, f"Task {task.name!r} has no stored report yet: it is queued below; export again "
                               "once it is done.")
        return redirect("agreement:detail", task_id=task.pk)
    try:
        body = results_zip([(task, report.result)])
    except ExportError as exc:  # e.g. a pooled judging task, whose humans have no main score: the page says why
        messages.error(request, f"Cannot export task {task.name!r} to MTEB: {exc}")
        return redirect("agreement:detail", task_id=task.pk)
    response = HttpResponse(body, content_type="application/zip")
    filename = export_filename(task, "zip").replace("report-", "mteb-", 1)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
