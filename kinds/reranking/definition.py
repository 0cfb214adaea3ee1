"""Reranking: a query (optional instruction) and its candidates, relevant or not per candidate.

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): {candidate_id: 0 | 1} for every candidate.
"""
from __future__ import annotations

from typing import Any

from kinds.base import (
    ParsedRecord,
    TaskConfig,
    TaskKind,
    ValidationProblem,
    deterministic_shuffle,
    id_text_list,
    optional_external_id,
    string_list,
    text_field,
)

from .evaluation import RerankingEvaluation
from .form import RerankingForm
from .prompt import RerankingPrompt
from .samples import SAMPLES
from .scorer import RerankingScorer


class Reranking(TaskKind):
    record_fields = ("query", "instruction?", "candidates[{id,text,relevant}]")
    format_note = "or MTEB's positive[] / negative[] lists instead of candidates"
    gold_field = "candidates"
    csv_fields = ()
    stratified = False
    averageable = False  # a mean of 0/1 judgments is not a judgment
    mteb_type = "Reranking"
    payload_template = "kinds/reranking/payload.html"
    answer_form = RerankingForm
    prompt = RerankingPrompt()
    scorer = RerankingScorer
    model_evaluation = RerankingEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/reranking/keys_help.html"
    aggregates_labels = True
    label_unit = "candidates"

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        query = text_field(record, "query")
        instruction = text_field(record, "instruction", required=False)
        if "candidates" in record:
            candidates, gold = self._candidates(record)
        elif "positive" in record or "negative" in record:
            candidates, gold = self._positive_negative(record, query or "")
        else:
            raise ValidationProblem("candidates", "is required (or MTEB's positive/negative lists)")
        payload = {"query": query, "instruction": instruction, "candidates": candidates}
        return ParsedRecord(optional_external_id(record), payload, gold)

    def _candidates(self, record: dict[str, Any]) -> tuple[list[dict[str, str]], dict[str, int] | None]:
        candidates, gold = [], {}
        for i, (shown, entry) in enumerate(id_text_list(record, "candidates", "candidate")):
            candidates.append(shown)
            if entry.get("relevant") is not None:
                gold[shown["id"]] = self._binary(entry["relevant"], f"candidates[{i}].relevant")
        if gold and len(gold) != len(candidates):
            raise ValidationProblem("candidates", "relevant must be given for every candidate or none")
        return candidates, (gold or None)

    def _positive_negative(self, record: dict[str, Any], query: str) -> tuple[list[dict[str, str]], dict[str, int]]:
        positives = string_list(record, "positive", min_len=0) if "positive" in record else []
        negatives = string_list(record, "negative", min_len=0) if "negative" in record else []
        if not positives and not negatives:
            raise ValidationProblem("positive", "positive and negative are both empty")
        tagged = [(t, 1) for t in positives] + [(t, 0) for t in negatives]
        ordered = deterministic_shuffle(tagged, query)
        candidates = [{"id": f"c{i + 1}", "text": t} for i, (t, _) in enumerate(ordered)]
        gold = {f"c{i + 1}": rel for i, (_, rel) in enumerate(ordered)}
        return candidates, gold

    @staticmethod
    def _binary(value: Any, name: str) -> int:
        if value in (0, 1, True, False) and not isinstance(value, float):
            return int(value)
        if isinstance(value, str) and value.strip().lower() in {"0", "1", "true", "false"}:
            return int(value.strip().lower() in {"1", "true"})
        raise ValidationProblem(name, f"must be 0 or 1, got {value!r}")

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, int]:
        ids = [c["id"] for c in payload["candidates"]]
        if not isinstance(value, dict):
            raise ValidationProblem("value", "must be an object {candidate_id: 0 or 1}")
        missing = [cid for cid in ids if cid not in value]
        unknown = [k for k in value if k not in ids]
        if missing:
            raise ValidationProblem("value", f"candidates not judged: {missing}")
        if unknown:
            raise ValidationProblem("value", f"unknown candidate ids: {unknown}")
        return {cid: self._binary(value[cid], f"value.{cid}") for cid in ids}

