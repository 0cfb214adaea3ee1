"""Pages for LLM annotators: endpoints (admins), runs with their progress, and judge panels.

Admins configure and steer; researchers may read everything (configurations without keys, runs, raw
outputs of failures, panels). The key itself is never rendered: pages say where it comes from.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.core.models import Annotator
from annotation.core.signals import judge_panel_refresh_requested
from annotation.llm.forms import LLMAnnotatorForm, PanelForm, RunForm
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel, LLMRequest, LLMRun
from annotation.llm.run_control import (
    cancel_run,
    create_llm_annotator,
    create_run,
    enqueue_run,
    is_stalled,
    pause_run,
    resume_run,
)
from annotation.llm.run_progress import run_progress
from hume.lib.htmx import vary_on_htmx, wants_partial
from hume.roles import ADMIN, RESEARCHER, is_admin, require_role


def get_llm_config(request: HttpRequest, annotator_id: int) -> LLMAnnotatorConfig:
    require_role(request.user, RESEARCHER, "LLM annotators are for researchers and admins.")
    return get_object_or_404(LLMAnnotatorConfig.objects.select_related("annotator__user"), annotator_id=annotator_id)


def get_run(request: HttpRequest, run_id: int) -> LLMRun:
    require_role(request.user, RESEARCHER, "LLM annotators are for researchers and admins.")
    return get_object_or_404(LLMRun.objects.select_related("annotator__user", "task", "batch"), pk=run_id)


def get_panel(request: HttpRequest, panel_id: int) -> LLMJudgePanel:
    require_role(request.user, RESEARCHER, "LLM annotators are for researchers and admins.")
    return get_object_or_404(LLMJudgePanel.objects.select_related("task", "mean_annotator__user"), pk=panel_id)


@login_required
def llm_home(request: HttpRequest) -> HttpResponse:
    require_role(request.user, RESEARCHER, "LLM annotators are for researchers and admins.")
    context = {
        "configs": LLMAnnotatorConfig.objects.select_related("annotator__user").order_by("annotator__user__username"),
        # LLM annotators made by an import, the CLI or a judge panel have no endpoint here, but they exist
        "unconfigured": Annotator.objects.filter(agent=Annotator.Agent.LLM, llm_config__isnull=True)
        .select_related("user").order_by("user__username"),
        "runs": LLMRun.objects.select_related("annotator__user", "task", "batch")[:50],
        "panels": LLMJudgePanel.objects.select_related("task").prefetch_related("judges__user"),
        "is_admin": is_admin(request.user),
    }
    return render(request, "annotation/llm/home.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def annotator_create(request: HttpRequest) -> HttpResponse:
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    form = LLMAnnotatorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        config = create_llm_annotator(
            form.cleaned_data["name"], created_by=request.user,
            api_key_secret=form.cleaned_data.get("api_key_secret") or "",
            **{name: form.cleaned_data[name] for name in form.Meta.fields},
        )
        messages.success(request, f"LLM annotator {config.annotator.name} created.")
        return redirect("llm:annotator", config.annotator_id)
    return render(request, "annotation/llm/annotator_form.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def annotator_edit(request: HttpRequest, annotator_id: int) -> HttpResponse:
    config = get_llm_config(request, annotator_id)
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    form = LLMAnnotatorForm(request.POST or None, instance=config)
    if request.method == "POST" and form.is_valid():
        config = form.save(commit=False)
        form.apply_secret(config)
        config.save()
        messages.success(request, "Configuration saved.")
        return redirect("llm:annotator", annotator_id)
    return render(request, "annotation/llm/annotator_form.html", {"form": form, "config": config})


@login_required
def annotator_detail(request: HttpRequest, annotator_id: int) -> HttpResponse:
    config = get_llm_config(request, annotator_id)
    runs = LLMRun.objects.filter(annotator_id=annotator_id).select_related("task", "batch")
    context = {"config": config, "runs": runs, "is_admin": is_admin(request.user), "run_form": RunForm()}
    return render(request, "annotation/llm/annotator.html", context)


@login_required
@require_POST
def run_start(request: HttpRequest, annotator_id: int) -> HttpResponse:
    config = get_llm_config(request, annotator_id)
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    form = RunForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("llm:annotator", annotator_id)
    with transaction.atomic():
        run = create_run(config.annotator, batch=form.cleaned_data["batch"], task=form.cleaned_data["task"],
                         created_by=request.user, retry_failed=form.cleaned_data["retry_failed"])
        enqueue_run(run)
    return redirect("llm:run", run.pk)


@login_required
@vary_on_htmx
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page; htmx polls the same URL for the progress fragment while the run is active."""
    run = get_run(request, run_id)
    context = {"run": run, "progress": run_progress(run), "is_admin": is_admin(request.user),
               "stalled": is_stalled(run)}
    if wants_partial(request):
        return render(request, "annotation/llm/_run_partial.html", context)
    requests = LLMRequest.objects.filter(annotator_id=run.annotator_id, model=run.model,
                                         prompt_version=run.prompt_version).select_related("item")
    context["failures"] = requests.filter(status=LLMRequest.Status.FAILED).order_by("-finished_at")[:200]
    context["recent"] = requests.filter(run=run, status=LLMRequest.Status.SUCCEEDED).order_by("-finished_at")[:50]
    return render(request, "annotation/llm/run.html", context)


RUN_ACTIONS = {"pause": pause_run, "resume": resume_run, "cancel": cancel_run}


@login_required
@require_POST
def run_action(request: HttpRequest, run_id: int, action: str) -> HttpResponse:
    run = get_run(request, run_id)
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    if action not in RUN_ACTIONS:
        raise PermissionDenied(f"unknown action {action!r}")
    with transaction.atomic():
        changed = RUN_ACTIONS[action](run)
        if changed and action == "resume":
            enqueue_run(run)
    if not changed:
        messages.error(request, f"The run is {run.state}; it cannot be {action}d now.")
    return redirect("llm:run", run.pk)


@login_required
@require_http_methods(["GET", "POST"])
def panel_create(request: HttpRequest) -> HttpResponse:
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    form = PanelForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        panel = form.save(commit=False)
        panel.created_by = request.user
        panel.save()
        form.save_m2m()
        return redirect("llm:panel", panel.pk)
    return render(request, "annotation/llm/panel_form.html", {"form": form})


@login_required
def panel_detail(request: HttpRequest, panel_id: int) -> HttpResponse:
    panel = get_panel(request, panel_id)
    context = {"panel": panel, "judges": panel.judges.select_related("user"), "is_admin": is_admin(request.user),
               "run_form": RunForm(initial={"task": panel.task})}
    return render(request, "annotation/llm/panel.html", context)


@login_required
@require_POST
def panel_refresh(request: HttpRequest, panel_id: int) -> HttpResponse:
    """Recompute the mean of judges and the agreement in the worker (metric work never runs in a view)."""
    panel = get_panel(request, panel_id)
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    judge_panel_refresh_requested.send(sender=LLMJudgePanel, panel_id=panel.pk)
    messages.success(request, "Recomputing the mean of judges and their agreement; reload in a moment.")
    return redirect("llm:panel", panel.pk)


@login_required
@require_POST
def panel_run(request: HttpRequest, panel_id: int) -> HttpResponse:
    """Start one run per judge over the same batch or task."""
    panel = get_panel(request, panel_id)
    require_role(request.user, ADMIN, "Only admins configure and steer LLM annotators.")
    form = RunForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("llm:panel", panel.pk)
    scope = form.cleaned_data["task"] or form.cleaned_data["batch"].task
    if scope.pk != panel.task_id:
        messages.error(request, f"The panel judges {panel.task.name}; choose that task or one of its batches.")
        return redirect("llm:panel", panel.pk)
    with transaction.atomic():
        for judge in panel.judges.filter(llm_config__isnull=False):
            enqueue_run(create_run(judge, batch=form.cleaned_data["batch"], task=form.cleaned_data["task"],
                                   created_by=request.user, retry_failed=form.cleaned_data["retry_failed"]))
    messages.success(request, "One run per judge started.")
    return redirect("llm:home")
