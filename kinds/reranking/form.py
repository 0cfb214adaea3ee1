"""The answer form of the reranking kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.forms import MAX_KEYED, AnswerForm


class RerankingForm(AnswerForm):
    """Binary relevance per candidate; every candidate must be judged (no default of "not relevant")."""

    template = "kinds/reranking/answer.html"

    def candidates(self) -> list[dict[str, str]]:
        return self.payload.get("candidates", [])

    def last_key(self) -> int:
        return min(len(self.candidates()), MAX_KEYED)

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.candidates()):
            self.fields[f"c{i}"] = forms.TypedChoiceField(
                choices=[("1", "relevant"), ("0", "not relevant")], coerce=int, widget=forms.RadioSelect,
                error_messages={"required": "Judge this candidate."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, int]:
        return {c["id"]: data[f"c{i}"] for i, c in enumerate(self.candidates())}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"c{i}": str(value.get(c["id"], "")) for i, c in enumerate(self.candidates()) if c["id"] in value}

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"c{i}", "text": c["text"], "key": str(i + 1) if i < MAX_KEYED else "",
                 "value": self.current(f"c{i}"), "errors": self[f"c{i}"].errors}
                for i, c in enumerate(self.candidates())]
