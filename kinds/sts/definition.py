"""STS: two sentences, their similarity on the task's scale (default 0–5).

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): a number on the task's scale (default 0–5).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kinds.base import ParsedRecord, TaskConfig, TaskKind, number_field, on_scale, optional_external_id, text_field
from kinds.ppi_estimands import KindEstimands, Scale, number_on_scale

from .evaluation import StsEvaluation
from .form import STSForm
from .prompt import STSPrompt
from .samples import SAMPLES
from .scorer import StsScorer


class StsEstimands(KindEstimands):
    """`similarity`: the mean similarity, an answer's number being the answer itself."""

    def names(self, scale: Scale) -> list[str]:
        return ["similarity"]

    def numbers(self, value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
        return {"similarity": number_on_scale(value, "value", scale)}


class STS(TaskKind):
    record_fields = ("sentence1", "sentence2", "score")
    gold_field = "score"
    csv_fields = ("sentence1", "sentence2", "score")
    stratified = False
    averageable = True
    mteb_type = "STS"
    payload_template = "kinds/sts/payload.html"
    answer_form = STSForm
    prompt = STSPrompt()
    scorer = StsScorer
    model_evaluation = StsEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/sts/keys_help.html"
    sentence_pairs = True
    ppi_estimands = StsEstimands()
    scripts = ("kinds/sts/slider.js",)
    styles = ("kinds/sts/slider.css",)
    default_scale = (0.0, 5.0, 0.5)

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"sentence1": text_field(record, "sentence1"), "sentence2": text_field(record, "sentence2")}
        gold = None
        if record.get("score") not in (None, ""):
            lo, hi, _ = self.scale(task)
            gold = on_scale(number_field(record["score"], "score"), "score", lo, hi, None)
        return ParsedRecord(optional_external_id(record), payload, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> float:
        lo, hi, step = self.scale(task)
        return on_scale(number_field(value, "value"), "value", lo, hi, step)

