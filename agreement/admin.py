"""Django admin for stored reports, imported model results and campaigns (read-mostly: they are written by
jobs, imports and the campaign command)."""
from typing import Any

from django.contrib import admin

from agreement.models import Campaign, Report
from agreement.results.models import ResultModel, ResultRevision, ResultScore


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    """Read only: campaigns start and stop through `manage.py campaign` or the API (docs/campaigns.md), which
    check what the admin form would not."""

    list_display = ("name", "task", "judge", "state", "reason", "target_half_width", "budget_labels", "created_at")
    list_filter = ("state",)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("task", "status", "progress", "computed_at", "computed_in", "attempts", "computations")
    list_filter = ("status",)
    search_fields = ("task__name",)
    readonly_fields = ("answers_digest", "inputs_digest", "claim_token", "claimed_by", "result")
    raw_id_fields = ("task",)


class ResultRevisionInline(admin.TabularInline):
    model = ResultRevision
    extra = 0
    fields = ("revision", "annotator_id", "is_current", "n_subsets", "mteb_version", "imported_at")
    readonly_fields = ("n_subsets", "mteb_version", "imported_at")


@admin.register(ResultModel)
class ResultModelAdmin(admin.ModelAdmin):
    list_display = ("name", "agent", "current_pinned", "updated_at")
    list_filter = ("agent",)
    search_fields = ("name",)
    inlines = [ResultRevisionInline]


@admin.register(ResultScore)
class ResultScoreAdmin(admin.ModelAdmin):
    list_display = ("mteb_task_name", "hf_subset", "split", "main_score", "revision")
    list_filter = ("mteb_task_name", "split")
    search_fields = ("mteb_task_name", "hf_subset", "revision__model__name")
    list_select_related = ("revision__model",)
    raw_id_fields = ("revision",)
