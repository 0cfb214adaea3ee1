"""The answer form of the sts kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.base import ValidationProblem
from kinds.forms import AnswerForm, scale_points, short_number


class STSForm(AnswerForm):
    """One similarity score. The number field starts empty: a slider left where it started is no answer."""

    template = "kinds/sts/answer.html"

    def add_answer_fields(self) -> None:
        self.fields["score"] = forms.FloatField(error_messages={"required": "Move the slider or type a score."})

    def value_from_fields(self, data: dict[str, Any]) -> float:
        return data["score"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"score": short_number(value)}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "score"

    def scale(self) -> dict[str, str]:
        lo, hi, step = self.task.scale
        ticks = scale_points(lo, hi, 1.0) if hi - lo <= 10 else [lo, hi]
        return {"min": short_number(lo), "max": short_number(hi), "step": short_number(step) or "any",
                "mid": short_number(lo + (hi - lo) / 2), "ticks": [short_number(t) for t in ticks]}
