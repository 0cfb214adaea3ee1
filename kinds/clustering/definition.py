"""Clustering: a set of texts, a free cluster id per text; only the partition counts.

What an item, its gold and an answer look like (docs/import.md has the file format).

Value format (answers; gold uses the same format): a list with one cluster id (str) per sentence; only the
partition counts.
"""
from __future__ import annotations

from typing import Any

from kinds.base import (
    ParsedRecord,
    TaskConfig,
    TaskKind,
    ValidationProblem,
    id_string,
    optional_external_id,
    string_list,
)

from .evaluation import ClusteringEvaluation
from .form import ClusteringForm
from .prompt import ClusteringPrompt
from .samples import SAMPLES
from .scorer import ClusteringScorer


class Clustering(TaskKind):
    record_fields = ("sentences[]", "labels[]")
    format_note = "one set per line"
    gold_field = "labels"
    csv_fields = ()
    stratified = False
    averageable = False
    mteb_type = "Clustering"
    answers_are_partitions = True  # cluster ids are free names: {a, a, b} answers what {x, x, y} does
    payload_template = "kinds/clustering/payload.html"
    answer_form = ClusteringForm
    prompt = ClusteringPrompt()
    scorer = ClusteringScorer
    model_evaluation = ClusteringEvaluation()
    samples = SAMPLES
    keys_help_template = "kinds/clustering/keys_help.html"
    scripts = ("kinds/clustering/clusters.js",)
    styles = ("kinds/clustering/clusters.css",)

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        sentences = string_list(record, "sentences", min_len=2)
        gold = None
        if record.get("labels") is not None:
            labels = record["labels"]
            if not isinstance(labels, list) or len(labels) != len(sentences):
                raise ValidationProblem("labels", f"must be a list of {len(sentences)} labels, one per sentence")
            gold = [id_string(v, f"labels[{i}]") for i, v in enumerate(labels)]
        return ParsedRecord(optional_external_id(record), {"sentences": sentences}, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> list[str]:
        n = len(payload["sentences"])
        if not isinstance(value, list) or len(value) != n:
            raise ValidationProblem("value", f"must be a list of {n} cluster ids, one per text")
        return [id_string(v, f"value[{i}]") for i, v in enumerate(value)]

