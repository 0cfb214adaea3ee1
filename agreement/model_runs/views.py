"""The report page's "Run all registered models" button (admins): queue the runs, come back to the report;
and the model rows' part, which the report page polls (htmx) while a run is queued or running."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from kombu.exceptions import OperationalError as BrokerError

from agreement.model_runs.evaluate import check_supported
from agreement.model_runs.models import EmbeddingModel
from agreement.model_runs.rows import rows_context
from agreement.model_runs.runs import enqueue, start_run
from hume.roles import is_admin, is_researcher
from tasks_app.models import Task


@login_required
@require_POST
def start(request: HttpRequest, task_id: int) -> HttpResponse:
    if not is_admin(request.user):
        raise PermissionDenied("Only admins start model runs.")
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
    except BrokerError as exc:
        messages.error(request, f"The job queue is unavailable ({exc}); the runs are stored, try again later.")
    else:
        messages.success(request, f"{len(models)} model run(s) queued.")
    return redirect("agreement:detail", task_id=task.pk)


@login_required
@require_GET
def rows(request: HttpRequest, task_id: int) -> HttpResponse:
    if not is_researcher(request.user):
        raise PermissionDenied("Only researchers and admins read model rows.")
    task = get_object_or_404(Task, pk=task_id)
    return render(request, "model_runs/_model_rows.html", {"task": task, **rows_context(task.pk, request.user)})
