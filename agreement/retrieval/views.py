"""Pages of the retrieval room, mounted at /retrieval/: collections, and one collection's dashboard.

Researchers and admins read and run the study: upload a collection (``upload``), import a TREC run, start BM25
and model rankings (the workers rank them; the rankings panel polls their progress), pool rankings, create the judging
batch, evaluate. Every action is a POST that refuses with the form's errors and changes nothing; the numbers
come from the stored evaluation (``evaluations``), which views only arrange. Query parameters: ``metric`` (ndcg@k,
recall@k, map), ``baseline`` (a ranking), ``subset``, ``method`` (a ranking method: embedding only, reranked,
...), ``ref`` (the reference whose curves are drawn).
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from agreement.model_runs.models import NotAllowedToRun, check_may_run
from agreement.retrieval import evaluations
from agreement.retrieval.actions import create_judging_batch, ranking_progress, start_bm25_ranking, start_model_ranking
from agreement.retrieval.collection_uploads import import_upload
from agreement.retrieval.evaluation_inputs import judge_usage
from agreement.retrieval.forms import (
    Bm25RankingForm,
    CollectionUploadForm,
    JudgingBatchForm,
    ModelRankingForm,
    PoolForm,
    TrecRankingForm,
)
from agreement.retrieval.models import Collection, Evaluation, Pool, Ranking
from agreement.retrieval.pooling import build_pool
from agreement.retrieval.rankings import import_ranking
from annotation.core.batches import AssignmentProblem
from annotation.llm.models import LLMRun
from annotation.models import Annotation, Batch
from hume.jobs import BrokerDown
from hume.lib.htmx import vary
from hume.lib.import_reader import ImportFailed
from hume.roles import researcher_required
from measures.retrieval import curves

TEMPLATES = "agreement/retrieval"


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    collections = Collection.objects.annotate(n_subsets=Count("subsets", distinct=True),
                                              n_rankings=Count("rankings", distinct=True)).order_by("name")
    return render(request, f"{TEMPLATES}/index.html", {"collections": collections})


@researcher_required
def upload(request: HttpRequest) -> HttpResponse:
    """Researchers import one subset of a collection (archive or files); a bad upload changes nothing, says why."""
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
    return render_collection(request, get_object_or_404(Collection, name=name))


def render_collection(request: HttpRequest, target: Collection, *, bound: dict[str, forms.Form] | None = None,
                      problems: list[object] | None = None, status: int = 200) -> HttpResponse:
    """The dashboard, with the researcher's forms (a refused one bound, showing its errors) and the rankings panel."""
    subsets = target.subsets.annotate(n_docs=Count("documents", distinct=True),
                                      n_queries=Count("queries", distinct=True))
    evaluation = Evaluation.objects.filter(collection=target).first()
    action_forms = {"trec": TrecRankingForm(subsets=subset_names(target), prefix="trec"),
                    "bm25": Bm25RankingForm(prefix="bm25"), "model": ModelRankingForm(prefix="model"),
                    "pool": PoolForm(collection=target, prefix="pool")} | (bound or {})
    context = {"collection": target, "subsets": subsets, "pools": pool_rows(target, bound),
               "evaluation": evaluation, "methods": Ranking.Method.choices, "forms": action_forms,
               "trec_problems": problems or []} | rankings_context(target)
    if evaluation and evaluation.rows:
        context |= leaderboard_context(request, evaluation)
    return render(request, f"{TEMPLATES}/collection.html", context, status=status)


def subset_names(target: Collection) -> list[str]:
    return list(target.subsets.order_by("name").values_list("name", flat=True))


def rankings_context(target: Collection) -> dict[str, object]:
    rows = ranking_progress(target)
    return {"collection": target, "ranking_rows": rows, "rankings_active": any(row.active for row in rows)}


@researcher_required
def rankings_panel(request: HttpRequest, name: str) -> HttpResponse:
    """The rankings table alone: the page polls it (htmx) while a ranking is queued or running."""
    target = get_object_or_404(Collection, name=name)
    return vary(render(request, f"{TEMPLATES}/_rankings_partial.html", rankings_context(target)))


@researcher_required
@require_POST
def import_trec_ranking(request: HttpRequest, name: str) -> HttpResponse:
    """A TREC run file as a ranking of the collection; a bad file stores nothing and lists every bad line."""
    target = get_object_or_404(Collection, name=name)
    form = TrecRankingForm(request.POST, request.FILES, subsets=subset_names(target), prefix="trec")
    problems: list[object] = []
    if form.is_valid():
        upload = form.cleaned_data["run_file"]
        try:
            summary = import_ranking(upload, upload.name, collection=target.name, name=form.cleaned_data["name"],
                                 subset=form.cleaned_data["subset"] or None)
        except ImportFailed as failed:
            problems = list(failed.problems)
        else:
            messages.success(request, "Imported " + "; ".join(summary.lines()) + ".")
            return redirect("retrieval:collection", name=target.name)
    return render_collection(request, target, bound={"trec": form}, problems=problems, status=400)


@researcher_required
@require_POST
def start_bm25(request: HttpRequest, name: str) -> HttpResponse:
    target = get_object_or_404(Collection, name=name)
    form = Bm25RankingForm(request.POST, prefix="bm25")
    if form.is_valid():
        try:
            ranking = start_bm25_ranking(target, form.cleaned_data["name"], k=form.cleaned_data["k"])
        except ValueError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"BM25 ranking {ranking.name} is queued; the rankings table shows its progress.")
            return redirect("retrieval:collection", name=target.name)
    return render_collection(request, target, bound={"bm25": form}, status=400)


@researcher_required
@require_POST
def start_model(request: HttpRequest, name: str) -> HttpResponse:
    target = get_object_or_404(Collection, name=name)
    form = ModelRankingForm(request.POST, prefix="model")
    if form.is_valid():
        data = form.cleaned_data
        try:
            check_may_run(request.user, [data["model"]])
            ranking = start_model_ranking(target, data["name"].strip() or data["model"].name, data["model"],
                                          k=data["k"], docs_per_chunk=data["docs_per_chunk"])
        except NotAllowedToRun as exc:
            form.add_error("model", str(exc))
        except ValueError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"Ranking {ranking.name} of {data['model'].name} is queued in "
                                      f"{ranking.chunks.count()} chunk(s); the rankings table shows its progress.")
            return redirect("retrieval:collection", name=target.name)
    return render_collection(request, target, bound={"model": form}, status=400)


@researcher_required
@require_POST
def pool(request: HttpRequest, name: str) -> HttpResponse:
    """Pool the chosen rankings' top-k of one subset (or add to its pool): the judging task."""
    target = get_object_or_404(Collection, name=name)
    form = PoolForm(request.POST, collection=target, prefix="pool")
    if form.is_valid():
        data = form.cleaned_data
        try:
            summary = build_pool(data["subset"], list(data["rankings"]), data["depth"], step=data["step"])
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Pooled: " + "; ".join(summary.lines()) + ".")
            return redirect("retrieval:collection", name=target.name)
    return render_collection(request, target, bound={"pool": form}, status=400)


@researcher_required
@require_POST
def judging_batch(request: HttpRequest, name: str, pool_id: int) -> HttpResponse:
    """The pool's batch for the annotators of its language, with an optional LLM judge."""
    target = get_object_or_404(Collection, name=name)
    chosen = get_object_or_404(Pool.objects.select_related("task"), pk=pool_id, subset__collection=target)
    form = JudgingBatchForm(request.POST, prefix=f"batch-{chosen.pk}")
    if form.is_valid():
        try:
            made = create_judging_batch(chosen, overlap=form.cleaned_data["overlap"],
                                        judge=form.cleaned_data["judge"], created_by=request.user)
        except (AssignmentProblem, ValueError) as exc:
            form.add_error(None, str(exc))
        else:
            who = ", ".join(made.annotators) or "no annotator yet (none lists the language)"
            judge = f"; LLM judge {form.cleaned_data['judge'].name} started" if made.judge_run else ""
            verb = "Created" if made.created else "Updated"
            messages.success(request, f"{verb} batch {made.batch.name} for {who}{judge}.")
            return redirect("retrieval:collection", name=target.name)
    return render_collection(request, target, bound={f"batch-{chosen.pk}": form}, status=400)


def leaderboard_context(request: HttpRequest, evaluation: Evaluation) -> dict[str, object]:
    picked = {key: request.GET.get(key) or None for key in ("baseline", "subset", "method", "ref")}
    metric = request.GET.get("metric") or "ndcg@10"
    try:
        board = evaluations.table(evaluation.rows, metric=metric, baseline=picked["baseline"], subset=picked["subset"],
                              method=picked["method"])
    except ValueError as exc:
        messages.error(request, str(exc))
        metric = "ndcg@10"
        board = evaluations.table(evaluation.rows, metric=metric, subset=picked["subset"], method=picked["method"])
    rows = [{"ranking": name, "cells": [(board["values"][ref].get(name), board["deltas"].get(ref, {}).get(name))
                                        for ref in board["references"]]} for name in board["rankings"]]
    ref = picked["ref"] if picked["ref"] in board["references"] else (board["references"] or [None])[0]
    svg = curves.curves_svg(board["curves"][ref], f"{evaluation.collection.name}: {ref}") if ref else ""
    return {"board": board, "board_rows": rows, "metric": metric, "picked": picked, "curve_ref": ref,
            "curves_svg": svg, "subset_names": sorted({r["subset"] for r in evaluation.rows})}


def pool_rows(target: Collection, bound: dict[str, forms.Form] | None = None) -> list[dict[str, object]]:
    out = []
    for pool in Pool.objects.filter(subset__collection=target).select_related("subset", "task"):
        batches = (Batch.objects.filter(task=pool.task).annotate(n_assignees=Count("assignees", distinct=True))
                   .order_by("name"))
        judge_runs = LLMRun.objects.filter(task=pool.task).select_related("annotator__user").order_by("pk")
        answers = (Annotation.objects.counted().filter(item__retrieval_unit__pool=pool, skipped=False)
                   .values("annotator__user__username", "annotator__agent").annotate(n=Count("pk"))
                   .order_by("annotator__user__username"))
        out.append({"pool": pool, "units": pool.units.count(), "answers": list(answers),
                    "usage": judge_usage(pool.subset), "rankings": [r.name for r in pool.rankings.all()],
                    "batches": list(batches), "judge_runs": list(judge_runs),
                    "form": (bound or {}).get(f"batch-{pool.pk}") or JudgingBatchForm(prefix=f"batch-{pool.pk}")})
    return out


@researcher_required
@require_POST
def evaluate(request: HttpRequest, name: str) -> HttpResponse:
    target = get_object_or_404(Collection, name=name)
    try:
        evaluations.request_evaluation(target)
        messages.success(request, "The evaluation is queued; this page shows it once a worker has computed it.")
    except BrokerDown as down:  # the evaluation is stored, queued; its message waits in the job layer's outbox
        messages.warning(request, f"The evaluation is {down}.")
    return redirect("retrieval:collection", name=target.name)
