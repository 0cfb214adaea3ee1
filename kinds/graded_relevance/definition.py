"""Graded relevance: a query and its documents, a score per document on the task's scale.

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): {doc_id: number on the task's scale} for every document.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kinds.base import (
    ParsedRecord,
    TaskConfig,
    TaskKind,
    ValidationProblem,
    id_text_list,
    number_field,
    on_scale,
    optional_external_id,
    text_field,
)
from kinds.ppi_estimands import KindEstimands, Scale, keyed, number_on_scale

from .evaluation import GradedRelevanceEvaluation
from .form import GradedRelevanceForm
from .prompt import GradedRelevancePrompt
from .samples import SAMPLES
from .scorer import GradedRelevanceScorer


class GradedRelevanceEstimands(KindEstimands):
    """`grade` (an item's mean grade over its documents) and `share_at_least:<t>` (its share of documents
    graded ≥ t). Summarised per item, the unit people label and the sample is drawn in, so the estimate is the
    mean over items of the per-item mean grade, not a mean over documents."""

    def names(self, scale: Scale) -> list[str]:
        return ["grade", f"share_at_least:{scale.threshold:g}"]

    def numbers(self, value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
        grades = keyed(value, documents, "document")
        values = [number_on_scale(grades[d], f"value.{d}", scale) for d in documents]
        threshold = scale.threshold if scale.threshold is not None else default_threshold(scale.lo, scale.hi)
        return {"grade": sum(values) / len(values),
                f"share_at_least:{threshold:g}": sum(v >= threshold for v in values) / len(values)}

    def default_threshold(self, lo: float, hi: float) -> float | None:
        return default_threshold(lo, hi)

    def bounds(self, name: str, scale: Scale) -> tuple[float, float]:
        return (0.0, 1.0) if name.startswith("share_at_least:") else (scale.lo, scale.hi)


def default_threshold(lo: float, hi: float) -> float:
    """Graded relevance's default "relevant" grade: 70% up the scale, 7 on 0–10 (the judges' threshold of
    docs/retrieval.md, "Evaluating runs")."""
    return lo + 0.7 * (hi - lo)


class GradedRelevance(TaskKind):
    record_fields = ("query", "documents[{id,text,score}]")
    gold_field = "documents"
    csv_fields = ()
    stratified = False
    averageable = True
    mteb_type = "Retrieval"
    payload_template = "kinds/graded_relevance/payload.html"
    answer_form = GradedRelevanceForm
    prompt = GradedRelevancePrompt()
    scorer = GradedRelevanceScorer
    model_evaluation = GradedRelevanceEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/graded_relevance/keys_help.html"
    ppi_estimands = GradedRelevanceEstimands()
    default_scale = (0.0, 10.0, 1.0)

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        query = text_field(record, "query")
        documents, gold = [], {}
        for i, (shown, entry) in enumerate(id_text_list(record, "documents", "document")):
            documents.append(shown)
            if entry.get("score") is not None:
                gold[shown["id"]] = number_field(entry["score"], f"documents[{i}].score")
        payload = {"query": query, "documents": documents}
        return ParsedRecord(optional_external_id(record), payload, gold or None)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, float]:
        ids = [d["id"] for d in payload["documents"]]
        if not isinstance(value, dict) or sorted(value) != sorted(ids):
            raise ValidationProblem("value", f"must score every document exactly once: {ids}")
        lo, hi, step = self.scale(task)
        return {d: on_scale(number_field(value[d], f"value.{d}"), f"value.{d}", lo, hi, step) for d in ids}

