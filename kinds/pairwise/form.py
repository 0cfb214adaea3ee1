"""The answer form of the pairwise kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any, ClassVar

from django import forms

from kinds.base import ValidationProblem
from kinds.forms import AnswerForm


class PairwiseForm(AnswerForm):
    template = "kinds/pairwise/answer.html"
    CHOICES: ClassVar[list[tuple[str, str, str]]] = [("a", "A is better", "a"), ("tie", "Tie", "t"),
                                                     ("b", "B is better", "b")]

    def add_answer_fields(self) -> None:
        self.fields["choice"] = forms.ChoiceField(choices=[(v, label) for v, label, _ in self.CHOICES],
                                                  widget=forms.RadioSelect,
                                                  error_messages={"required": "Choose A, B or tie."})

    def value_from_fields(self, data: dict[str, Any]) -> str:
        return data["choice"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"choice": value}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "choice"

    def rows(self) -> list[dict[str, Any]]:
        chosen = self.current("choice")
        return [{"value": v, "label": label, "key": key, "checked": v == chosen} for v, label, key in self.CHOICES]
