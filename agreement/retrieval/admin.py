"""Django admin for the retrieval room: collections, rankings and pools to look at (imports go through the CLI)."""
from django.contrib import admin

from agreement.retrieval.models import Collection, Evaluation, Pool, Ranking, Subset


class SubsetInline(admin.TabularInline):
    model = Subset
    extra = 0
    fields = ("name", "language")


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)
    inlines = [SubsetInline]


@admin.register(Ranking)
class RankingAdmin(admin.ModelAdmin):
    list_display = ("name", "collection", "method", "depth", "base_ranking", "created_at")
    list_filter = ("method", "collection")
    search_fields = ("name",)
    raw_id_fields = ("base_ranking",)


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ("subset", "depth", "task", "created_at")
    raw_id_fields = ("task",)


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("collection", "status", "updated_at")
    readonly_fields = ("digest", "rows", "judges", "claimed_by")
