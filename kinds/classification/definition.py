"""Classification: one text, one label of the task's label set (HUME: the label kinds).

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): a label string from the task's label set.
"""
from __future__ import annotations

from typing import Any

from kinds.base import ParsedRecord, TaskConfig, TaskKind, ValidationProblem, optional_external_id, text_field
from kinds.ppi_estimands import ChoiceShares

from .evaluation import ClassificationEvaluation
from .form import ClassificationForm
from .prompt import ClassificationPrompt
from .samples import SAMPLES
from .scorer import ClassificationScorer


class Classification(TaskKind):
    record_fields = ("text", "label")
    gold_field = "label"
    csv_fields = ("text", "label")
    stratified = True
    averageable = False
    mteb_type = "Classification"
    payload_template = "kinds/classification/payload.html"
    answer_form = ClassificationForm
    prompt = ClassificationPrompt()
    scorer = ClassificationScorer
    model_evaluation = ClassificationEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/classification/keys_help.html"
    aggregates_labels = True
    ppi_estimands = ChoiceShares()
    needs_labels = True

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        text = text_field(record, "text")
        gold = None
        if record.get("label") not in (None, ""):
            gold = self._label(record["label"], task, "label")
        return ParsedRecord(optional_external_id(record), {"text": text}, gold)

    def _label(self, value: Any, task: TaskConfig, name: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValidationProblem(name, f"must be a label string, got {type(value).__name__}")
        label = str(value)
        if task.labels and label not in task.labels:
            raise ValidationProblem(name, f"unknown label {label!r}; the task's labels are {task.labels}")
        return label

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> str:
        return self._label(value, task, "value")

    def gold_labels(self, gold: Any) -> list[str]:
        return [gold] if gold is not None else []

