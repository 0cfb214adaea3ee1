"""Django admin for annotators, batches, holds and annotations."""
from django.contrib import admin

from annotation.models import (
    Annotation,
    AnnotationRevision,
    Annotator,
    AnnotatorLanguage,
    Batch,
    BatchAssignee,
    BatchItem,
    Hold,
)


class AnnotatorLanguageInline(admin.TabularInline):
    model = AnnotatorLanguage
    extra = 1


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ("user", "agent", "active", "created_at")
    list_filter = ("agent", "active")
    search_fields = ("user__username",)
    inlines = [AnnotatorLanguageInline]


class BatchAssigneeInline(admin.TabularInline):
    model = BatchAssignee
    extra = 1
    raw_id_fields = ("annotator",)


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "language", "overlap", "is_open", "due_date", "created_at")
    list_filter = ("is_open", "language")
    search_fields = ("name", "task__name")
    inlines = [BatchAssigneeInline]
    raw_id_fields = ("task",)


@admin.register(BatchItem)
class BatchItemAdmin(admin.ModelAdmin):
    list_display = ("batch", "item", "position")
    raw_id_fields = ("batch", "item")


@admin.register(Hold)
class HoldAdmin(admin.ModelAdmin):
    list_display = ("batch_item", "annotator", "held_at", "expires_at")
    raw_id_fields = ("batch_item", "annotator")


class AnnotationRevisionInline(admin.TabularInline):
    model = AnnotationRevision
    extra = 0
    readonly_fields = ("value", "skipped", "previous_submitted_at", "replaced_at")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("item", "annotator", "batch", "skipped", "flagged", "submitted_at", "source")
    list_filter = ("skipped", "flagged", "source")
    raw_id_fields = ("item", "annotator", "batch")
    inlines = [AnnotationRevisionInline]
from annotation.llm import admin as llm_admin  # noqa: E402,F401  (registers the LLM annotator models)
