"""Graded relevance: a query and its documents, a score per document on the task's scale.

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): {doc_id: number on the task's scale} for every document.
"""
from __future__ import annotations

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

from .evaluation import GradedRelevanceEvaluation
from .form import GradedRelevanceForm
from .prompt import GradedRelevancePrompt
from .scorer import GradedRelevanceScorer


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
    keys_help_template = "kinds/graded_relevance/keys_help.html"
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

