"""The annotator's loop's forms: each kind's answer form (looked up in the registry; the forms themselves are
kinds/<name>/form.py), and the skip and flag forms every kind shares."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.forms import AnswerForm, ShortEchoes, scale_points
from kinds.kind_registry import Parts
from tasks_app.models import Task

__all__ = ["ANSWER_FORMS", "AnswerForm", "FlagForm", "SkipForm", "answer_form_for", "scale_points"]

ANSWER_FORMS: Parts[type[AnswerForm]] = Parts("answer_form")  # {kind name: its answer form}, from the registry


def answer_form_for(task: Task, payload: dict[str, Any], data: Any = None, *, answer: Any = None) -> AnswerForm:
    return ANSWER_FORMS[task.kind](task, payload, data, answer=answer)


FLAG_TAGS = [("ambiguous", "ambiguous"), ("broken text", "broken text")]
SKIP_REASONS = [
    ("unsure", "I can't judge this confidently"),
    ("language", "Outside my language skills"),
    ("broken", "The text is broken or unreadable"),
    ("other", "Other (say why)"),
]


class FlagForm(ShortEchoes, forms.Form):
    """Why an item is problematic: tags and/or free text. Optional next to an answer, required alone."""

    flag_tags = forms.MultipleChoiceField(choices=FLAG_TAGS, required=False, widget=forms.CheckboxSelectMultiple)
    flag_comment = forms.CharField(required=False, max_length=2000, strip=True)

    def __init__(self, *args: Any, required: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.required = required

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.required and not self.errors and not self.comment_from(cleaned):
            raise forms.ValidationError("Say what is wrong: tick ambiguous or broken text, or write a comment.")
        return cleaned

    @staticmethod
    def comment_from(cleaned: dict[str, Any]) -> str:
        parts = list(cleaned.get("flag_tags") or [])
        if cleaned.get("flag_comment"):
            parts.append(cleaned["flag_comment"])
        return "; ".join(parts)

    @property
    def comment(self) -> str:
        return self.comment_from(self.cleaned_data)


class SkipForm(ShortEchoes, forms.Form):
    skip_reason = forms.ChoiceField(choices=SKIP_REASONS, error_messages={"required": "Choose why you skip."})
    skip_note = forms.CharField(required=False, max_length=480, strip=True)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("skip_reason") == "other" and not cleaned.get("skip_note"):
            self.add_error("skip_note", "Say why you skip this item.")
        return cleaned

    @property
    def reason(self) -> str:
        label = dict(SKIP_REASONS)[self.cleaned_data["skip_reason"]]
        note = self.cleaned_data.get("skip_note")
        return f"{label}: {note}" if note else label
