"""The answer form of the likert kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.base import ValidationProblem
from kinds.forms import AnswerForm, scale_points, short_number


class LikertForm(AnswerForm):
    """A point of the task's scale (default 1–7) on every named axis."""

    template = "kinds/likert/answer.html"

    def points(self) -> list[float | int]:
        return scale_points(*self.task.scale)

    def add_answer_fields(self) -> None:
        choices = [(short_number(p), short_number(p)) for p in self.points()]
        for i, _ in enumerate(self.task.axes or []):
            self.fields[f"a{i}"] = forms.TypedChoiceField(choices=choices, coerce=float, widget=forms.RadioSelect,
                                                          error_messages={"required": "Rate this axis."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, float]:
        return {axis: data[f"a{i}"] for i, axis in enumerate(self.task.axes or [])}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"a{i}": short_number(value.get(axis)) for i, axis in enumerate(self.task.axes or [])}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        axes = list(self.task.axes or [])
        axis = problem.field.removeprefix("value.")
        return f"a{axes.index(axis)}" if axis in axes else None

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, axis in enumerate(self.task.axes or []):
            chosen = self.current(f"a{i}")
            points = [{"value": short_number(p), "checked": short_number(p) == chosen} for p in self.points()]
            rows.append({"name": f"a{i}", "axis": axis, "points": points, "errors": self[f"a{i}"].errors})
        return rows
