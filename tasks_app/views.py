"""Task pages: the list, a task's detail with an item preview, and the dataset upload and its background
import's page (admins)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import F, QuerySet
from django.db.models.functions import Lower
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from hume.lib.htmx import page_or_partial, vary_on_htmx
from hume.lib.import_reader import ImportProblem
from hume.listing import search_and_sort
from hume.roles import ADMIN, is_researcher, require_role

from .forms import SampleForm, attempt_import
from .importing import ImportSummary
from .models import ImportJob, Item, Task
from .task_access import get_visible_task, may_import, may_see_gold, visible_tasks, with_counts

PREVIEW_PAGE = 20
TASK_SEARCH = ("name", "kind", "language", "mteb_task_name")
TASK_SORTS = {"name": (Lower("name"),), "kind": ("kind", Lower("name")), "language": ("language", Lower("name")),
              "items": ("n_items",), "gold": ("n_gold",), "sample": ("sample_size",)}


@login_required
def task_list(request: HttpRequest) -> HttpResponse:
    tasks, listing = search_and_sort(request, with_counts(visible_tasks(request.user)), search=TASK_SEARCH,
                                     sorts=TASK_SORTS, default="name")
    return render(request, "tasks_app/task_list.html",
                  {"tasks": tasks, "listing": listing, "may_import": may_import(request.user)})


@login_required
@vary_on_htmx
def task_detail(request: HttpRequest, task_id: int) -> HttpResponse:
    """The task and a page of its items; htmx page links get only the items fragment."""
    task = get_visible_task(request.user, task_id)
    show_gold = may_see_gold(request.user)
    show_items = is_researcher(request.user)  # annotators meet items one by one in their batches
    page = Paginator(preview_items(task, show_gold), PREVIEW_PAGE).get_page(request.GET.get("page"))
    context = {"task": task, "page": page, "show_gold": show_gold, "show_items": show_items,
               "may_import": may_import(request.user),
               "sample_form": SampleForm(initial={"size": task.sample_size, "seed": task.sample_seed})}
    return page_or_partial(request, "tasks_app/task_detail.html", "tasks_app/_items.html", context)


def preview_items(task: Task, with_gold: bool) -> QuerySet[Item]:
    """Items in file order; the gold join exists only in the admin's query, so it cannot leak by template."""
    items = Item.objects.filter(task=task).only("id", "task_id", "external_id", "position", "payload", "in_sample")
    if with_gold:
        items = items.annotate(gold_value=F("gold__value"))
    return items.order_by("position", "id")


@login_required
@require_http_methods(["GET", "POST"])
def task_import(request: HttpRequest) -> HttpResponse:
    """Upload a dataset: the same import as `manage.py import_task`; errors name file, line and field."""
    require_role(request.user, ADMIN, "Only admins import datasets.")
    attempt = attempt_import(request)
    if attempt.job is not None:
        return redirect("tasks_app:import-job", job_id=attempt.job.pk)
    if attempt.summary is not None:
        for line in attempt.summary.lines():
            messages.success(request, line)
        return redirect("tasks_app:detail", task_id=attempt.summary.task_id)
    return render(request, "tasks_app/task_import.html", {"form": attempt.form, "problems": attempt.problems},
                  status=attempt.status)


@login_required
@require_http_methods(["GET"])
@vary_on_htmx
def import_job(request: HttpRequest, job_id: int) -> HttpResponse:
    """A big import's progress and, when it ends, its result (polled by htmx while it runs)."""
    require_role(request.user, ADMIN, "Only admins import datasets.")
    job = get_object_or_404(ImportJob, pk=job_id)
    summary = ImportSummary(**job.summary) if job.summary else None
    problems = [ImportProblem(**problem) for problem in job.problems]
    return page_or_partial(request, "tasks_app/import_job.html", "tasks_app/_import_job.html",
                           {"job": job, "summary": summary, "problems": problems})
