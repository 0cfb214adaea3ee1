"""What an admin does to a task from its page: sample a subset and edit the instructions.

The same functions as the `sample_task` command and the import (tasks_app/sampling.py, the Task row), so the page
and the CLI cannot drift apart. Admins only; researchers read the task page but change nothing.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from hume.roles import ADMIN, require_role

from . import instructions
from .forms import InstructionsForm, SampleForm
from .models import Task
from .sampling import SamplingError, clear_sample, sample_task
from .task_access import get_visible_task


def task_to_change(request: HttpRequest, task_id: int) -> Task:
    """The task for an admin; 403 for anyone else who can see it, 404 for anyone who cannot."""
    task = get_visible_task(request.user, task_id)
    require_role(request.user, ADMIN, "Only admins change tasks.")
    return task


@login_required
@require_POST
def task_sample(request: HttpRequest, task_id: int) -> HttpResponse:
    task = task_to_change(request, task_id)
    form = SampleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Sample not changed: " + " ".join(
            f"{'' if name == '__all__' else name + ': '}{' '.join(errors)}" for name, errors in form.errors.items()))
        return redirect("tasks_app:detail", task_id=task.pk)
    data = form.cleaned_data
    if data["clear"]:
        clear_sample(task)
        messages.success(request, "Sample cleared: all items form the pool.")
        return redirect("tasks_app:detail", task_id=task.pk)
    try:
        result = sample_task(task, data["size"], data["seed"])
    except SamplingError as exc:
        messages.error(request, f"Sample not changed: {exc}")
    else:
        messages.success(request, "; ".join(line.strip() for line in result.lines()))
        if task.batches.exists():  # reverse relation only: tasks_app does not import annotation
            messages.warning(request, "The task already has batches, drawn from the previous pool: check them.")
    return redirect("tasks_app:detail", task_id=task.pk)


@login_required
@require_http_methods(["GET", "POST"])
def task_instructions(request: HttpRequest, task_id: int) -> HttpResponse:
    """Edit the Markdown; “Preview” renders it as annotators will see it without saving, “Save” stores it."""
    task = task_to_change(request, task_id)
    form = InstructionsForm(request.POST or None, initial={"instructions": task.instructions})
    text = task.instructions
    status = 200
    if request.method == "POST":
        if not form.is_valid():
            status = 400
        elif "save" in request.POST:
            task.instructions = form.cleaned_data["instructions"]
            task.save(update_fields=["instructions", "updated_at"])
            messages.success(request, "Instructions saved.")
            return redirect("tasks_app:detail", task_id=task.pk)
        else:
            text = form.cleaned_data["instructions"]
    return render(request, "tasks_app/task_instructions.html",
                  {"task": task, "form": form, "preview": instructions.to_html(text) if status == 200 else ""},
                  status=status)
