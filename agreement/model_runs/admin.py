"""Admin pages of the model registry and of model runs (runs are written by jobs: read-only here)."""
from django.contrib import admin

from agreement.model_runs.models import EmbeddingModel, ModelRun


@admin.register(EmbeddingModel)
class EmbeddingModelAdmin(admin.ModelAdmin):
    list_display = ("name", "backend", "metric", "model_id", "dimensions", "short_revision", "researchers_may_run",
                    "created_at")
    list_filter = ("backend", "researchers_may_run")
    search_fields = ("name", "model_id", "mteb_name")
    readonly_fields = ("revision", "dimensions", "identity", "created_at")

    @admin.display(description="revision")
    def short_revision(self, obj: EmbeddingModel) -> str:
        return obj.revision[:16]


@admin.register(ModelRun)
class ModelRunAdmin(admin.ModelAdmin):
    list_display = ("model", "task", "status", "progress", "chunks_done", "chunks_total", "texts_encoded",
                    "device", "protocol", "finished_at")
    list_filter = ("status", "protocol", "model")
    search_fields = ("task__name", "model__name")
    raw_id_fields = ("task", "model")
    readonly_fields = ("inputs_digest", "protocol", "status", "chunks_total", "chunks_done", "texts_encoded", "device",
                       "scores", "error", "claim_token", "lease_expires_at", "finished_at")
