"""Pages of the retrieval room, mounted at /retrieval/: collections, and one collection's dashboard.

Researchers and admins read, admins also upload collections (``upload``); the numbers come from the stored
evaluation (``reports``), which views only arrange. Query parameters: ``metric`` (ndcg@k, recall@k, map),
``baseline`` (a run), ``subset``, ``kind`` (a run kind: embedding only, reranked, ...), ``ref`` (the reference
whose curves are drawn).
"""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from agreement.results.views import researcher_required
from agreement.retrieval import plots, reports
from agreement.retrieval.evaluation import judge_usage
from agreement.retrieval.forms import CollectionUploadForm
from agreement.retrieval.models import Collection, Evaluation, Pool, Run
from agreement.retrieval.uploads import import_upload
from annotation.models import Annotation
from hume.roles import is_admin
from tasks_app.importing.reader import ImportFailed

TEMPLATES = "agreement/retrieval"


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    collections = Collection.objects.annotate(n_subsets=Count("subsets", distinct=True),
                                              n_runs=Count("runs", distinct=True)).order_by("name")
    return render(request, f"{TEMPLATES}/index.html", {"collections": collections,
                                                       "is_admin": is_admin(request.user)})


@researcher_required
def upload(request: HttpRequest) -> HttpResponse:
    """Admins import one subset of a collection (archive or files); a bad upload changes nothing and says why."""
    if not is_admin(request.user):
        raise PermissionDenied("Only admins may import collections.")
    form = CollectionUploadForm(request.POST or None, request.FILES or None)
    problems: list[object] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            summary = import_upload(name=data["name"], language=data["language"], subset=data["subset"] or None,
                                    archive=data["archive"], corpus=data["corpus"], queries=data["queries"],
                                    qrels=data["qrels"])
        except ImportFailed as failed:
            problems = list(failed.problems)
        else:
            messages.success(request, "Imported " + "; ".join(summary.lines()) + ".")
            return redirect("retrieval:collection", name=summary.collection)
    status = 400 if request.method == "POST" else 200
    return render(request, f"{TEMPLATES}/upload.html", {"form": form, "problems": problems}, status=status)


@researcher_required
def collection(request: HttpRequest, name: str) -> HttpResponse:
    target = get_object_or_404(Collection, name=name)
    subsets = target.subsets.annotate(n_docs=Count("documents", distinct=True),
                                      n_queries=Count("queries", distinct=True))
    evaluation = Evaluation.objects.filter(collection=target).first()
    context = {"collection": target, "subsets": subsets, "runs": target.runs.order_by("name"),
               "pools": pool_rows(target), "evaluation": evaluation, "kinds": Run.Kind.choices}
    if evaluation and evaluation.rows:
        context |= leaderboard_context(request, evaluation)
    return render(request, f"{TEMPLATES}/collection.html", context)


def leaderboard_context(request: HttpRequest, evaluation: Evaluation) -> dict[str, object]:
    picked = {key: request.GET.get(key) or None for key in ("baseline", "subset", "kind", "ref")}
    metric = request.GET.get("metric") or "ndcg@10"
    try:
        board = reports.table(evaluation.rows, metric=metric, baseline=picked["baseline"], subset=picked["subset"],
                              kind=picked["kind"])
    except ValueError as exc:
        messages.error(request, str(exc))
        metric = "ndcg@10"
        board = reports.table(evaluation.rows, metric=metric, subset=picked["subset"], kind=picked["kind"])
    rows = [{"run": run, "cells": [(board["values"][ref].get(run), board["deltas"].get(ref, {}).get(run))
                                   for ref in board["references"]]} for run in board["runs"]]
    ref = picked["ref"] if picked["ref"] in board["references"] else (board["references"] or [None])[0]
    svg = plots.curves_svg(board["curves"][ref], f"{evaluation.collection.name}: {ref}") if ref else ""
    return {"board": board, "board_rows": rows, "metric": metric, "picked": picked, "curve_ref": ref,
            "curves_svg": svg, "subset_names": sorted({r["subset"] for r in evaluation.rows})}


def pool_rows(target: Collection) -> list[dict[str, object]]:
    out = []
    for pool in Pool.objects.filter(subset__collection=target).select_related("subset", "task"):
        answers = (Annotation.objects.filter(item__retrieval_unit__pool=pool, skipped=False)
                   .values("annotator__user__username", "annotator__kind").annotate(n=Count("pk"))
                   .order_by("annotator__user__username"))
        out.append({"pool": pool, "units": pool.units.count(), "answers": list(answers),
                    "usage": judge_usage(pool.subset), "runs": [r.name for r in pool.runs.all()]})
    return out


@researcher_required
@require_POST
def evaluate(request: HttpRequest, name: str) -> HttpResponse:
    target = get_object_or_404(Collection, name=name)
    try:
        reports.request_evaluation(target)
        messages.success(request, "The evaluation is queued; this page shows it once a worker has computed it.")
    except reports.QueueError as exc:
        messages.error(request, f"The evaluation could not be queued: {exc}")
    return redirect("retrieval:collection", name=target.name)
