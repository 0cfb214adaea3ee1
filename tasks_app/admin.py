"""Django admin for tasks and items. Gold is shown to admins only (the admin site is staff-only).

TaskAdmin has an "Import dataset" page: the upload form and import function of /tasks/import/, inside admin.
"""
from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from .forms import attempt_import
from .models import Item, ItemGold, Task


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "language", "mteb_task_name", "mteb_subset", "sample_size", "created_at")
    list_filter = ("kind", "language")
    search_fields = ("name", "mteb_task_name")
    change_list_template = "admin/tasks_app/task/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        extra = [path("import/", self.admin_site.admin_view(self.import_view), name="tasks_app_task_import")]
        return extra + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a dataset from the admin; same form, same import function as the task pages and the API."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        attempt = attempt_import(request)
        if attempt.job is not None:  # a big file: imported by a worker; its page shows progress and result
            return redirect("tasks_app:import-job", job_id=attempt.job.pk)
        if attempt.summary is not None:
            self.message_user(request, "; ".join(attempt.summary.lines()), messages.SUCCESS)
            return redirect("admin:tasks_app_task_change", attempt.summary.task_id)
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": attempt.form,
                   "problems": attempt.problems, "title": "Import a dataset"}
        return TemplateResponse(request, "admin/tasks_app/task/import_form.html", context, status=attempt.status)


class ItemGoldInline(admin.StackedInline):
    model = ItemGold
    extra = 0


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "task", "position", "in_sample")
    list_filter = ("task", "in_sample")
    search_fields = ("external_id", "uid")
    list_select_related = ("task",)
    inlines = [ItemGoldInline]
    raw_id_fields = ("task",)
