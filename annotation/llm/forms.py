"""Forms of the LLM annotator pages. The API key secret is write-only: never rendered back into a form. A refused
form shows each value again cut to its field's length (or 40 characters) and errors quote it cut (ShortEchoes): a
5,001-digit number came back whole in every field (issue 35, item 8)."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator

from annotation.core.models import Annotator, Batch
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel
from kinds.forms import ShortEchoes
from tasks_app.models import Task

CONFIG_FIELDS = ("base_url", "model", "api_key_env", "temperature", "max_tokens", "json_mode", "max_concurrency",
                 "requests_per_minute", "timeout_seconds", "max_retries", "max_answer_retries", "price_per_1k_input",
                 "price_per_1k_output")


class SecretInput(forms.PasswordInput):
    """A password box that never renders the stored value, whatever the form was given."""

    def __init__(self) -> None:
        super().__init__(render_value=False, attrs={"autocomplete": "new-password"})


class LLMAnnotatorForm(ShortEchoes, forms.ModelForm):
    """Create or edit an LLM annotator's endpoint. A blank secret keeps the stored one; "clear" removes it."""

    name = forms.CharField(max_length=150, validators=[UnicodeUsernameValidator()],
                           help_text="Shown in reports, e.g. llm-gpt-4.1-mini.")
    api_key_secret = forms.CharField(
        required=False, widget=SecretInput(), label="API key (secret)",
        help_text="Only if no environment variable is named. Write-only: it is never shown again.")
    clear_secret = forms.BooleanField(required=False, label="Remove the stored secret")

    class Meta:
        model = LLMAnnotatorConfig
        fields = CONFIG_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            del self.fields["name"]  # the annotator's name is its identity in every report
            if self.instance.has_secret:
                self.fields["api_key_secret"].help_text = "A secret is stored. Leave empty to keep it."
        else:
            del self.fields["clear_secret"]

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if User.objects.filter(username__iexact=name).exists():
            raise forms.ValidationError("A user or annotator with this name exists already.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        secret, env = data.get("api_key_secret"), data.get("api_key_env")
        if secret and env:
            self.add_error("api_key_secret", "Give either an environment variable name or a secret, not both.")
        return data

    def apply_secret(self, config: LLMAnnotatorConfig) -> None:
        if self.cleaned_data.get("api_key_secret"):
            config.api_key_secret = self.cleaned_data["api_key_secret"]
        elif self.cleaned_data.get("clear_secret") or self.cleaned_data.get("api_key_env"):
            config.api_key_secret = ""


class RunForm(ShortEchoes, forms.Form):
    """What an LLM annotator should answer: one batch, or a whole task's pool."""

    batch = forms.ModelChoiceField(queryset=Batch.objects.select_related("task"), required=False)
    task = forms.ModelChoiceField(queryset=Task.objects.all(), required=False,
                                  help_text="Or a whole task (its sampled pool), when no batch is chosen.")
    retry_failed = forms.BooleanField(required=False, help_text="Ask again for items whose earlier request failed.")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if bool(data.get("batch")) == bool(data.get("task")):
            raise forms.ValidationError("Choose a batch or a task (exactly one).")
        return data


def llm_annotators() -> Any:
    return Annotator.objects.filter(agent=Annotator.Agent.LLM, llm_config__isnull=False).select_related("user")


class PanelForm(ShortEchoes, forms.ModelForm):
    judges = forms.ModelMultipleChoiceField(queryset=llm_annotators(), widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = LLMJudgePanel
        fields = ("task", "name", "judges")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judges"].queryset = llm_annotators()
