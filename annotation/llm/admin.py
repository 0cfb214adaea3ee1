"""Django admin for LLM annotators. The secret is a write-only password box, and never listed."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from annotation.llm.forms import CONFIG_FIELDS, SecretInput
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel, LLMRequest, LLMRun


class LLMAnnotatorConfigAdminForm(forms.ModelForm):
    api_key_secret = forms.CharField(required=False, widget=SecretInput(), label="API key (secret)",
                                     help_text="Write-only. Leave empty to keep the stored secret.")
    clear_secret = forms.BooleanField(required=False, label="Remove the stored secret")

    class Meta:
        model = LLMAnnotatorConfig
        fields = ("annotator", *CONFIG_FIELDS, "logprobs", "confidence_samples", "max_requests", "requests_sent",
                  "created_by")


@admin.register(LLMAnnotatorConfig)
class LLMAnnotatorConfigAdmin(admin.ModelAdmin):
    form = LLMAnnotatorConfigAdminForm
    list_display = ("annotator", "model", "base_url", "key_source", "max_concurrency", "requests_per_minute")
    raw_id_fields = ("annotator", "created_by")
    readonly_fields = ("key_source",)

    def save_model(self, request: HttpRequest, obj: LLMAnnotatorConfig, form: Any, change: bool) -> None:
        if form.cleaned_data.get("api_key_secret"):
            obj.api_key_secret = form.cleaned_data["api_key_secret"]
        elif form.cleaned_data.get("clear_secret"):
            obj.api_key_secret = ""
        super().save_model(request, obj, form, change)


@admin.register(LLMRun)
class LLMRunAdmin(admin.ModelAdmin):
    list_display = ("id", "annotator", "task", "batch", "status", "paused", "http_requests", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("annotator", "task", "batch", "created_by")
    readonly_fields = ("claim_token", "claimed_by", "holder", "lease_expires_at", "attempts", "http_requests",
                       "prompt_tokens", "completion_tokens")


@admin.register(LLMRequest)
class LLMRequestAdmin(admin.ModelAdmin):
    list_display = ("id", "annotator", "item", "status", "failure_kind", "attempts", "prompt_tokens", "finished_at")
    list_filter = ("status", "failure_kind")
    raw_id_fields = ("annotator", "item", "run")


@admin.register(LLMJudgePanel)
class LLMJudgePanelAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "mean_annotator", "mean_computed_at")
    raw_id_fields = ("task", "mean_annotator", "created_by")
