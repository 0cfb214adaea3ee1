"""Small English study items of every kind for the model-run tests: each kind's own (its samples.py:
hand-written records with gold, two humans' answers and the task's settings), read through the registry."""
from __future__ import annotations

from typing import Any

from tests.kind_samples import SAMPLES, SampleTable

TASK_FIELDS = SampleTable("model_task_fields")  # {kind: the model task's settings}

# One kind's data by name, for the tests of that kind's model scores.
STS = [(r["sentence1"], r["sentence2"], r["score"]) for r in SAMPLES["sts"].model_records]
STS_HUMANS = SAMPLES["sts"].model_humans
RERANKING, RERANKING_HUMANS = SAMPLES["reranking"].model_records, SAMPLES["reranking"].model_humans
GRADED, GRADED_HUMANS = SAMPLES["graded_relevance"].model_records, SAMPLES["graded_relevance"].model_humans
CLUSTERING, CLUSTERING_HUMANS = SAMPLES["clustering"].model_records, SAMPLES["clustering"].model_humans
CLASSIFICATION = SAMPLES["classification"].model_records
CLASSIFICATION_HUMANS = SAMPLES["classification"].model_humans
PAIRWISE, PAIRWISE_HUMANS = SAMPLES["pairwise"].model_records, SAMPLES["pairwise"].model_humans
LIKERT, LIKERT_HUMANS = SAMPLES["likert"].model_records, SAMPLES["likert"].model_humans


def records(kind: str) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """(records with gold, {annotator: answers in item order}) for a kind."""
    return SAMPLES[kind].model_records, SAMPLES[kind].model_humans


def build_model_task(kind: str, name: str | None = None) -> Any:
    from tests.report_builders import answers_from_columns, build_task, import_answers

    recs, humans = records(kind)
    task = build_task(kind, name or f"models-{kind}", recs, **TASK_FIELDS.get(kind, {}))
    import_answers(task, answers_from_columns(humans))
    return task
