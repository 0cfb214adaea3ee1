"""Likert: a context and one text, a score per named axis (default 1–7).

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): {axis: integer on the task's scale (default 1–7)} for every axis.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kinds.base import (
    ParsedRecord,
    TaskConfig,
    TaskKind,
    ValidationProblem,
    number_field,
    on_scale,
    optional_external_id,
    text_field,
)
from kinds.ppi_estimands import KindEstimands, Scale, keyed, number_on_scale

from .evaluation import LikertEvaluation
from .form import LikertForm
from .prompt import LikertPrompt
from .samples import SAMPLES
from .scorer import LikertScorer


class LikertEstimands(KindEstimands):
    """`rating:<axis>` per axis: the mean rating on that axis."""

    def names(self, scale: Scale) -> list[str]:
        return [f"rating:{axis}" for axis in scale.axes]

    def numbers(self, value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
        scores = keyed(value, scale.axes, "axis")
        return {f"rating:{axis}": number_on_scale(scores[axis], f"value.{axis}", scale) for axis in scale.axes}


class Likert(TaskKind):
    record_fields = ("context", "text", "scores{axis: value}")
    gold_field = "scores"
    csv_fields = ("context", "text")
    stratified = False
    averageable = True
    mteb_type = "Summarization"
    payload_template = "kinds/likert/payload.html"
    answer_form = LikertForm
    prompt = LikertPrompt()
    scorer = LikertScorer
    model_evaluation = LikertEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/likert/keys_help.html"
    ppi_estimands = LikertEstimands()
    default_scale = (1.0, 7.0, 1.0)
    needs_axes = True

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"context": text_field(record, "context"), "text": text_field(record, "text")}
        gold = None
        scores = record.get("scores")
        if scores is None and any(axis in record for axis in task.axes):  # CSV: one column per axis
            scores = {axis: record[axis] for axis in task.axes if record.get(axis) not in (None, "")}
        if scores:
            if not isinstance(scores, dict):
                raise ValidationProblem("scores", "must be an object {axis: score}")
            unknown = [a for a in scores if a not in task.axes]
            if unknown:
                raise ValidationProblem("scores", f"unknown axes {unknown}; the task's axes are {task.axes}")
            lo, hi, _ = self.scale(task)
            gold = {a: on_scale(number_field(v, f"scores.{a}"), f"scores.{a}", lo, hi, None) for a, v in scores.items()}
        return ParsedRecord(optional_external_id(record), payload, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, float]:
        if not isinstance(value, dict) or sorted(value) != sorted(task.axes):
            raise ValidationProblem("value", f"must rate every axis exactly once: {task.axes}")
        lo, hi, step = self.scale(task)
        return {a: on_scale(number_field(value[a], f"value.{a}"), f"value.{a}", lo, hi, step) for a in task.axes}
