"""The researchers' escalation page (/escalation/, docs/escalation.md): ask for a plan (a worker computes it),
read the calibrated thresholds, the coverage, the guarantee and the alternative-annotator test, and (admins)
create the human batch of the escalated items.

GET never computes: a queued or running plan shows "being computed" and its part polls itself every second
(htmx), as the SAGE page does; the response that finds it finished swaps in the result.
"""
from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from kombu.exceptions import OperationalError as BrokerError

from agreement.core.exclusions import computed_before_exclusion, exclusion_changed_at
from agreement.escalation import plan_jobs
from agreement.escalation.models import EscalationPlan
from agreement.escalation.plan import LABEL_KINDS, RATING_KINDS, EscalationProblem
from annotation.models import Annotator
from hume.lib.htmx import page_or_partial, vary_on_htmx
from hume.roles import ADMIN, RESEARCHER, is_admin, require_role
from kinds.forms import excerpt
from tasks_app.task_access import visible_tasks

# The largest count a PositiveIntegerField holds on PostgreSQL (a 32-bit integer).
MAX_COUNT = 2**31 - 1


def _number(value: str | None, name: str, kind: type = float, *, least: float | None = None,
            most: float | None = None) -> Any:
    """The posted number (None when blank), or EscalationProblem naming the field and quoting the value cut to
    40 characters: not a number, not finite (nan, inf), or outside [least, most]."""
    if value in (None, ""):
        return None
    shown = excerpt(str(value))
    try:
        number = kind(value)
    except ValueError:  # not a number, or an integer past Python's 4,300 digits
        raise EscalationProblem(f"{name} must be {'a whole' if kind is int else 'a'} number, got {shown!r}") from None
    if not math.isfinite(number):
        raise EscalationProblem(f"{name} must be a finite number, got {shown!r}")
    if (least is not None and number < least) or (most is not None and number > most):
        bounds = f"from {least} to {most}" if most is not None else f"at least {least}"
        raise EscalationProblem(f"{name} must be {bounds}, got {shown!r}")
    return number


def _judge_names(text: str) -> list[str]:
    """The comma-separated judge names; a NUL (PostgreSQL refuses it in text: a 500 before) is refused by name."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if "\x00" in name:
            raise EscalationProblem(f"judges: {excerpt(name)!r} is not an annotator name (a NUL character)")
    return names


def _first(value: float | None, default: float) -> float:
    """The given value, or the default when the field was blank (an ε of 0 is a value, not a blank)."""
    return default if value is None else value


@login_required
def index(request: HttpRequest) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read escalation plans.")
    tasks = visible_tasks(request.user).filter(kind__in=LABEL_KINDS + RATING_KINDS).order_by("name")
    if request.method == "POST":
        try:
            task = get_object_or_404(tasks, pk=_number(request.POST.get("task"), "task", int) or 0)
            judges = _judge_names(request.POST.get("judges", ""))
            plan = plan_jobs.ask(task, judges, _number(request.POST.get("alpha"), "alpha") or 0.0,
                            _number(request.POST.get("delta"), "delta") or 0.0,
                            n_calibration=_number(request.POST.get("calibration"), "calibration", int, least=1,
                                                  most=MAX_COUNT),
                            tolerance=_number(request.POST.get("tolerance"), "tolerance", least=0),
                            epsilon=_first(_number(request.POST.get("epsilon"), "epsilon", least=0, most=1), 0.2),
                            user=request.user)
        except EscalationProblem as error:
            messages.error(request, f"Nothing was started: {error}")
            return redirect("escalation:index")
        except BrokerError as error:
            messages.error(request, f"The job queue is unavailable ({error}); the plan is stored, queued.")
            return redirect("escalation:index")
        return redirect("escalation:detail", plan_id=plan.pk)
    judges = Annotator.objects.filter(agent=Annotator.Agent.LLM).select_related("user").order_by("user__username")
    return render(request, "agreement/escalation/index.html", {
        "plans": EscalationPlan.objects.select_related("task")[:50], "tasks": tasks,
        "judges": [judge.name for judge in judges]})


@login_required
@vary_on_htmx
def detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read escalation plans.")
    plan = get_object_or_404(EscalationPlan.objects.select_related("task", "batch"), pk=plan_id)
    context = {"plan": plan, "result": plan.result, "may_create_batch": is_admin(request.user),
               "default_batch_name": f"{plan.task.name} · escalated #{plan.pk}",
               "before_exclusion": computed_before_exclusion(plan.finished_at, exclusion_changed_at(plan.task))}
    return page_or_partial(request, "agreement/escalation/detail.html", "agreement/escalation/_plan_partial.html",
                           context)


@login_required
@require_POST
def batch(request: HttpRequest, plan_id: int) -> HttpResponse:
    require_role(request.user, ADMIN, "Only admins create batches.")
    plan = get_object_or_404(EscalationPlan, pk=plan_id)
    try:
        overlap = _number(request.POST.get("overlap"), "overlap", int, least=1, most=MAX_COUNT) or 1
        name = request.POST.get("name", "").strip() or f"escalated #{plan.pk}"
        created = plan_jobs.create_batch(plan.pk, name, overlap)
    except EscalationProblem as error:
        messages.error(request, f"No batch was created: {error}")
    else:
        count = len(plan.result["escalated_item_ids"]) if plan.result else 0
        messages.success(request, f"Batch {created.name!r} created with the {count} escalated items.")
    return redirect("escalation:detail", plan_id=plan.pk)
