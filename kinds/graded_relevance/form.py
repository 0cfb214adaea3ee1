"""The answer form of the graded relevance kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.base import ValidationProblem
from kinds.forms import AnswerForm, short_number


class GradedRelevanceForm(AnswerForm):
    """A score per document on the task's scale (default 0–10, step from the task), typed or stepped."""

    template = "kinds/graded_relevance/answer.html"

    def documents(self) -> list[dict[str, str]]:
        return self.payload.get("documents", [])

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.documents()):
            self.fields[f"d{i}"] = forms.FloatField(error_messages={"required": "Score this document."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, float]:
        return {d["id"]: data[f"d{i}"] for i, d in enumerate(self.documents())}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"d{i}": short_number(value.get(d["id"])) for i, d in enumerate(self.documents())}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        ids = [d["id"] for d in self.documents()]
        doc_id = problem.field.removeprefix("value.")
        return f"d{ids.index(doc_id)}" if doc_id in ids else None

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"d{i}", "text": d["text"], "value": self.current(f"d{i}"), "errors": self[f"d{i}"].errors}
                for i, d in enumerate(self.documents())]

    def scale(self) -> dict[str, str]:
        lo, hi, step = self.task.scale
        return {"min": short_number(lo), "max": short_number(hi), "step": short_number(step) or "any"}
