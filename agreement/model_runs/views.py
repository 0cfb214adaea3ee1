"""The models page (/models/) and the task-level parts it shares with the report page.

Researchers list the registry, register a sentence-transformers folder found under MODEL_DIRS or a classical
metric, and run models on any task (issue 28 item 2); endpoints (URLs, key variables) are registered and
edited by admins only, in the Django admin, and shown here read-only to admins. A researcher starts only the
models whose "researchers may run" switch is on (`check_may_run`, the same check as the API and SAGE);
admins set the switch here. Starting a run stores it and queues its chunks; the task's model page (and the
report page) show the rows, polling while a run is queued or running. No page computes a score.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from kombu.exceptions import OperationalError as BrokerError

from agreement.model_runs.evaluate import UnsupportedKind, check_protocol, check_supported
from agreement.model_runs.execution import enqueue, start_run
from agreement.model_runs.folders import BackendError, available_folders, folder_by_label
from agreement.model_runs.models import CLASSICAL_METRICS, EmbeddingModel, NotAllowedToRun, check_may_run
from agreement.model_runs.registration import build, register
from agreement.model_runs.rows import rows_context
from hume.roles import ADMIN, RESEARCHER, is_admin, require_role, role_required
from tasks_app.core.kinds import KINDS
from tasks_app.models import Task

METRIC_TITLES = {"levenshtein": "Levenshtein ratio", "rouge": "ROUGE-L F1", "jaccard": "Jaccard similarity",
                 "bm25": "BM25 (Lucene variant)", "tfidf": "TF-IDF cosine"}


# Logged in and a researcher or admin: annotators never see models or their scores (403).
researcher_required = role_required(RESEARCHER, "Models are for researchers and admins.")


def what_it_is(model: EmbeddingModel) -> str:
    """The registry row in words, without a path, a URL or a key."""
    if model.backend == EmbeddingModel.Backend.CLASSICAL:
        return f"classical metric: {METRIC_TITLES.get(model.metric, model.metric)} (no vectors)"
    if model.backend == EmbeddingModel.Backend.OPENAI:
        return f"remote /v1/embeddings endpoint, model id {model.model_id}"
    dims = f", {model.dimensions} dimensions" if model.dimensions else ""
    return f"sentence-transformers folder{' shipped with HUME' if model.shipped else ''}{dims}"


def registry_rows(user: Any) -> list[dict[str, Any]]:
    admin = is_admin(user)
    rows = []
    for model in EmbeddingModel.objects.all():
        endpoint = None
        if admin and model.backend == EmbeddingModel.Backend.OPENAI:  # admins only; a key's value never
            endpoint = {"base_url": model.base_url, "key": model.api_key_env or None}
        rows.append({"model": model, "what": what_it_is(model), "endpoint": endpoint,
                     "may_run": admin or bool(model.researchers_may_run)})
    return rows


def _page_context(user: Any) -> dict[str, Any]:
    taken = set(EmbeddingModel.objects.filter(backend="classical").values_list("metric", flat=True))
    rows = registry_rows(user)
    return {"rows": rows, "is_admin": is_admin(user), "folders": [label for label, _ in available_folders()],
            "metrics": [(m, METRIC_TITLES[m]) for m in CLASSICAL_METRICS if m not in taken],
            "tasks": Task.objects.order_by("name").only("pk", "name", "kind"),
            "runnable": [r["model"] for r in rows if r["may_run"]], **_kinds_context()}


def _kinds_context() -> dict[str, Any]:
    """What the page says of the kinds, from the registry: the protocols besides MTEB's with the kinds that
    offer them, and the kinds a model without vectors cannot score."""
    protocols: dict[str, list[str]] = {}
    for kind in KINDS.values():
        for protocol in kind.model_evaluation.protocols:
            if protocol != "mteb":
                protocols.setdefault(protocol, []).append(kind.label)
    return {"other_protocols": list(protocols.items()),
            "vector_kinds": [kind.label for kind in KINDS.values() if kind.model_evaluation.encoder_only]}


@researcher_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "model_runs/index.html", _page_context(request.user))


def _register_folder(label: str, name: str) -> EmbeddingModel:
    folder = folder_by_label(label)
    try:
        model = build(name or folder.name, {"backend": "sentence-transformers", "shipped": False,
                                            "path": str(folder), "batch_size": 32, "mteb_name": None})
    except (BackendError, ValidationError, OSError, RuntimeError):  # their messages may name the server's folder
        raise BackendError(f"the model in {label!r} could not be loaded; an admin can check it with "
                           "manage.py add_model") from None
    return register(model)[0]


def _register_metric(metric: str, name: str) -> EmbeddingModel:
    if metric not in CLASSICAL_METRICS:
        raise BackendError(f"metric: choose one of {', '.join(CLASSICAL_METRICS)}")
    model = build(name or metric, {"backend": "classical", "metric": metric, "batch_size": 32, "mteb_name": None})
    return register(model)[0]


@researcher_required
@require_POST
def register_model(request: HttpRequest) -> HttpResponse:
    """A folder under MODEL_DIRS (by the label the page offered) or a classical metric; never an endpoint."""
    name = request.POST.get("name", "").strip()[:200]
    what = request.POST.get("what")
    try:
        if what == "folder":
            model = _register_folder(request.POST.get("folder", ""), name)
        elif what == "metric":
            model = _register_metric(request.POST.get("metric", ""), name)
        else:
            raise BackendError("choose a model folder or a classical metric (endpoints are registered by an admin)")
    except (BackendError, ValidationError) as exc:
        text = "; ".join(getattr(exc, "messages", [str(exc)]))
        messages.error(request, f"Nothing was registered: {text}")
    else:
        messages.success(request, f"{model.name} is registered ({what_it_is(model)}).")
    return redirect("model-runs-index")


def start_runs(user: Any, task: Task, models: Iterable[EmbeddingModel], protocol: str) -> int:
    """Check and queue: NotAllowedToRun or UnsupportedKind before anything is stored, BrokerError after."""
    models = list(models)
    check_may_run(user, models)
    for model in models:
        check_supported(task.kind, model)
    check_protocol(task.kind, protocol)
    with transaction.atomic():
        runs = [start_run(task, model, protocol=protocol) for model in models]
        for run in runs:
            enqueue(run)
    return len(runs)


@researcher_required
@require_POST
def run_models(request: HttpRequest) -> HttpResponse:
    """Pick a task and models on /models/ (or on a task's model page): the runs are queued for the workers."""
    task_id = request.POST.get("task", "")
    task = get_object_or_404(Task, pk=int(task_id)) if task_id.isdigit() and len(task_id) < 19 else None
    if task is None:
        messages.error(request, "Nothing was started: choose a task.")
        return redirect("model-runs-index")
    ids = [int(i) for i in request.POST.getlist("models") if i.isdigit() and len(i) < 19]
    models = list(EmbeddingModel.objects.filter(pk__in=ids))
    if not models:
        messages.error(request, "Nothing was started: choose at least one model.")
        return redirect("model-runs-task", task_id=task.pk)
    try:
        count = start_runs(request.user, task, models, request.POST.get("protocol") or "mteb")
    except (NotAllowedToRun, UnsupportedKind) as exc:
        messages.error(request, f"Nothing was started: {exc}")
    except BrokerError as exc:  # stored and queued: the job layer sends them when the broker is back
        messages.warning(request, f"Model runs: {exc}.")
    else:
        messages.success(request, f"{count} model run(s) queued on {task.name}.")
    return redirect("model-runs-task", task_id=task.pk)


@researcher_required
@require_GET
def task_models(request: HttpRequest, task_id: int) -> HttpResponse:
    """One task's model rows (polling while a run is pending) and a form to run more models on it."""
    task = get_object_or_404(Task, pk=task_id)
    runnable = []
    for row in registry_rows(request.user):
        try:
            check_supported(task.kind, row["model"])
        except UnsupportedKind:
            continue
        runnable.append(row)
    return render(request, "model_runs/task.html", {"task": task, "runnable": runnable,
                                                    **rows_context(task.pk, request.user)})


@login_required
@require_POST
def switch(request: HttpRequest, model_id: int) -> HttpResponse:
    """Admins turn a model's "researchers may run" switch on or off."""
    require_role(request.user, ADMIN, "Only admins set who may run a model.")
    model = get_object_or_404(EmbeddingModel, pk=model_id)
    model.researchers_may_run = request.POST.get("on") == "1"
    model.save(update_fields=["researchers_may_run"])
    state = "may" if model.researchers_may_run else "may no longer"
    messages.success(request, f"Researchers {state} start runs of {model.name}.")
    return redirect("model-runs-index")


@login_required
@require_POST
def start(request: HttpRequest, task_id: int) -> HttpResponse:
    """The report page's "Run all registered models" (admins): every model that can score the task."""
    require_role(request.user, ADMIN, "Only admins start model runs.")
    task = get_object_or_404(Task, pk=task_id)
    models = []
    for model in EmbeddingModel.objects.all():
        try:
            check_supported(task.kind, model)
        except ValueError:
            continue
        models.append(model)
    try:
        with transaction.atomic():
            for model in models:
                enqueue(start_run(task, model))
    except BrokerError as exc:  # stored and queued: the job layer sends them when the broker is back
        messages.warning(request, f"Model runs: {exc}.")
    else:
        messages.success(request, f"{len(models)} model run(s) queued.")
    return redirect("agreement:detail", task_id=task.pk)


@login_required
@require_GET
def rows(request: HttpRequest, task_id: int) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read model rows.")
    task = get_object_or_404(Task, pk=task_id)
    return render(request, "model_runs/_model_rows.html", {"task": task, **rows_context(task.pk, request.user)})
