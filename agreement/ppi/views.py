"""The report page's PPI panel: ask a worker for a judge's estimates, the panel fragment the page polls while
one is computing, and (admins, who make batches) a batch of the items a plan asks for. Researchers and admins
only, as every report page (agreement/views.py)."""
from __future__ import annotations

import time

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agreement.ppi.estimate_jobs import request_ppi
from agreement.ppi.human_batch import create_ppi_batch
from agreement.ppi.page import ppi_context
from agreement.ppi.ppi_loading import PPIInputError
from hume.jobs import BrokerDown
from hume.lib.htmx import vary
from hume.roles import ADMIN, RESEARCHER, require_role
from tasks_app.models import Task


class PPIRequestForm(forms.Form):
    judge = forms.CharField(max_length=150)
    alpha = forms.FloatField(min_value=0.001, max_value=0.5, initial=0.05)
    target_half_width = forms.FloatField(required=False, min_value=1e-9)


def researcher_task(request: HttpRequest, task_id: int) -> Task:
    require_role(request.user, RESEARCHER, "Reports are for researchers and admins.")
    return get_object_or_404(Task, pk=task_id)


@login_required
@require_POST
def request_estimate(request: HttpRequest, task_id: int) -> HttpResponse:
    """Queue the judge's estimates for a worker; refused input is said on the page and queues nothing."""
    task = researcher_task(request, task_id)
    form = PPIRequestForm(request.POST)
    if not form.is_valid():
        messages.error(request, "PPI: " + "; ".join(f"{field}: {' '.join(errors)}"
                                                    for field, errors in form.errors.items()))
    else:
        try:
            request_ppi(task, form.cleaned_data["judge"], alpha=form.cleaned_data["alpha"],
                        target_half_width=form.cleaned_data["target_half_width"])
        except PPIInputError as problem:
            messages.error(request, f"PPI: {problem}")
        except BrokerDown as down:  # the estimate is stored, queued; its message waits in the job layer's outbox
            messages.warning(request, f"PPI: {down}.")
    return redirect(reverse("agreement:detail", args=[task.pk]) + "#ppi")


@login_required
@require_GET
def panel(request: HttpRequest, task_id: int) -> HttpResponse:
    """The panel alone (htmx polls it while an estimate is queued or running)."""
    task = researcher_task(request, task_id)
    response = render(request, "ppi/_panel.html", {"task": task, **ppi_context(task, request.user)})
    return vary(response)


class PPIBatchForm(forms.Form):
    judge = forms.CharField(max_length=150)
    items = forms.IntegerField(min_value=1)
    # The option "by the judge's confidence": planned again for that draw, for the estimate's target and α.
    by_confidence = forms.BooleanField(required=False)
    target_half_width = forms.FloatField(required=False, min_value=1e-9)
    alpha = forms.FloatField(required=False, min_value=0.001, max_value=0.5)

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("by_confidence") and not cleaned.get("target_half_width"):
            self.add_error("target_half_width", "a draw by the judge's confidence is planned for a target ±W")
        return cleaned


@login_required
@require_POST
def create_batch(request: HttpRequest, task_id: int) -> HttpResponse:
    """Admins: a human batch of exactly the planned number of items, drawn uniformly (seeded by the clock,
    the seed in the batch's name), or, with the option, drawn by the judge's confidence and planned for that
    draw (`ppi_batch --by-confidence`); the same checks as `ppi_batch`, and nothing written when one fails."""
    task = researcher_task(request, task_id)
    require_role(request.user, ADMIN, "Batches are made by admins.")
    form = PPIBatchForm(request.POST)
    if not form.is_valid():
        messages.error(request, "PPI batch: " + "; ".join(f"{field}: {' '.join(errors)}"
                                                          for field, errors in form.errors.items()))
        return redirect(reverse("agreement:detail", args=[task.pk]) + "#ppi")
    data = form.cleaned_data
    size = ({"target_half_width": data["target_half_width"], "alpha": data["alpha"] or 0.05, "by_confidence": True}
            if data["by_confidence"] else {"n_items": data["items"]})
    try:
        made = create_ppi_batch(task, data["judge"], seed=time.time_ns() % 2**31, created_by=request.user, **size)
    except (PPIInputError, ValueError) as problem:
        messages.error(request, f"PPI batch: {problem}")
        return redirect(reverse("agreement:detail", args=[task.pk]) + "#ppi")
    drawn = f" ({made.design})" if data["by_confidence"] else ""
    messages.success(request, f"Created batch {made.batch.name!r} of {len(made.external_ids)} items{drawn}; "
                              "assign annotators to it on its page.")
    return redirect(reverse("agreement:detail", args=[task.pk]) + "#ppi")
