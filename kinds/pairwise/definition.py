"""Pairwise: a context and two texts, A, B or tie.

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): "a" | "b" | "tie".
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from kinds.base import ParsedRecord, TaskConfig, TaskKind, ValidationProblem, optional_external_id, text_field
from kinds.ppi_estimands import ChoiceShares, Scale

from .evaluation import PairwiseEvaluation
from .form import PairwiseForm
from .prompt import PairwisePrompt
from .samples import SAMPLES
from .scorer import PairwiseScorer


class PairwiseEstimands(ChoiceShares):
    """`share:a`, `share:b`, `share:tie`: the share of answers preferring each side, or neither."""

    what = "choices"

    def choices(self, scale: Scale) -> Sequence[str]:
        return Pairwise.choices


class Pairwise(TaskKind):
    record_fields = ("context", "a", "b", "preferred")
    format_note = "preferred: a, b or tie"
    gold_field = "preferred"
    csv_fields = ("context", "a", "b", "preferred")
    stratified = True
    averageable = False
    mteb_type = "PairClassification"
    payload_template = "kinds/pairwise/payload.html"
    answer_form = PairwiseForm
    prompt = PairwisePrompt()
    scorer = PairwiseScorer
    model_evaluation = PairwiseEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/pairwise/keys_help.html"
    aggregates_labels = True
    ppi_estimands = PairwiseEstimands()
    choices: ClassVar[tuple[str, ...]] = ("a", "b", "tie")

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"context": text_field(record, "context"), "a": text_field(record, "a"), "b": text_field(record, "b")}
        gold = None
        if record.get("preferred") not in (None, ""):
            gold = self._choice(record["preferred"], "preferred")
        return ParsedRecord(optional_external_id(record), payload, gold)

    def _choice(self, value: Any, name: str) -> str:
        choice = value.strip().lower() if isinstance(value, str) else value
        if choice not in self.choices:
            raise ValidationProblem(name, f"must be one of a, b, tie; got {value!r}")
        return choice

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> str:
        return self._choice(value, "value")

