"""The answer form of the classification kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.base import ValidationProblem
from kinds.forms import MAX_KEYED, AnswerForm


class ClassificationForm(AnswerForm):
    template = "kinds/classification/answer.html"

    def add_answer_fields(self) -> None:
        labels = self.task.labels or []
        self.fields["label"] = forms.ChoiceField(choices=[(label, label) for label in labels], widget=forms.RadioSelect,
                                                 error_messages={"required": "Choose a label."})

    def value_from_fields(self, data: dict[str, Any]) -> str:
        return data["label"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"label": value}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "label"

    def last_key(self) -> int:
        return min(len(self.task.labels or []), MAX_KEYED)

    def rows(self) -> list[dict[str, Any]]:
        chosen = self.current("label")
        return [{"value": label, "key": str(i + 1) if i < MAX_KEYED else "", "checked": label == chosen}
                for i, label in enumerate(self.task.labels or [])]
