"""The answer form of the clustering kind: posted fields become its value format (definition.py),
and the kind's validation decides."""
from __future__ import annotations

from typing import Any

from django import forms

from kinds.forms import AnswerForm


class ClusteringForm(AnswerForm):
    """A cluster name per text; names are free (only the partition counts), so renaming changes nothing."""

    template = "kinds/clustering/answer.html"

    def sentences(self) -> list[str]:
        return self.payload.get("sentences", [])

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.sentences()):
            self.fields[f"t{i}"] = forms.CharField(max_length=60,
                                                   error_messages={"required": "Give this text a cluster."})

    def value_from_fields(self, data: dict[str, Any]) -> list[str]:
        return [data[f"t{i}"] for i, _ in enumerate(self.sentences())]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"t{i}": str(cid) for i, cid in enumerate(value)}

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"t{i}", "text": text, "value": self.current(f"t{i}"), "errors": self[f"t{i}"].errors}
                for i, text in enumerate(self.sentences())]
