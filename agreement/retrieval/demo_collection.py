"""The demo's retrieval study (demo/retrieval/, `python manage.py demo_retrieval`): a small collection, a BM25
ranking and a ranking of the shipped all-MiniLM-L6-v2, pooled, judged by two demo people and an LLM judge, evaluated.

Every step is the one the collection's page starts (``actions``, ``pooling``, ``evaluations``), run here in the
command's process so the demo shows curves without waiting for a worker; each step is skipped when its result
is already there, so the run command may call it on every start. The judgments are written data
(demo/retrieval/judgments.tsv: a score per (query, document) of its topic, and a `*` line giving the
annotator's score for every other pooled pair), imported as the demo's other answers are (``hana``, ``ivan``,
and ``demo-judge``, an annotator whose agent is llm, as the other demo tasks' ``demo-llm``).
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from django.conf import settings

from agreement.model_runs.device import worker_device
from agreement.model_runs.embedding import embed
from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval import evaluations
from agreement.retrieval.actions import create_judging_batch
from agreement.retrieval.collection_import import import_collection
from agreement.retrieval.models import Collection, Evaluation, Pool, PoolUnit, Subset
from agreement.retrieval.pooling import build_pool
from agreement.retrieval.system_rankings import bm25_ranking, embedding_ranking
from annotation.answer_import import import_annotations
from hume.jobs import control

DEMO_RETRIEVAL = Path(settings.BASE_DIR) / "demo" / "retrieval"
COLLECTION = "Everyday Science"
SUBSET, LANGUAGE = "en", "eng-Latn"
K, DEPTH = 10, 5


def load(model: EmbeddingModel, say: Callable[[str], None] = lambda line: None) -> Collection:
    """Load (or complete) the demo study; returns the collection, evaluated."""
    if not Collection.objects.filter(name=COLLECTION).exists():
        summary = import_collection(DEMO_RETRIEVAL, name=COLLECTION, language=LANGUAGE, subset=SUBSET)
        say("; ".join(summary.lines()))
    collection = Collection.objects.get(name=COLLECTION)
    if not collection.rankings.filter(name="bm25").exists():
        bm25_ranking(collection, "bm25", k=K)
    if not collection.rankings.filter(name=model.name).exists():

        def vectors(texts: Sequence[str]) -> np.ndarray:
            return embed(model, texts)

        embedding_ranking(collection, model.name, vectors, k=K, device=worker_device())
    subset = Subset.objects.get(collection=collection, name=SUBSET)
    pool = build_pool(subset, list(collection.rankings.filter(name__in=["bm25", model.name])), DEPTH)
    say("; ".join(pool.lines()))
    chosen = Pool.objects.select_related("task").get(pk=pool.pool_id)
    create_judging_batch(chosen)  # for the demo's English speakers, who may judge the pairs themselves
    added = import_judgments(chosen)
    say(f"judgments: {added} added")
    evaluate(collection)
    return collection


def judgment_lines(pool: Pool) -> list[str]:
    """The pool's answers as annotation JSONL lines (one per annotator and pooled pair)."""
    scores: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
    with (DEMO_RETRIEVAL / "judgments.tsv").open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter="\t"):
            scores.setdefault((row["annotator"], row["kind"]), {})[row["query-id"], row["corpus-id"]] = float(
                row["score"])
    units = PoolUnit.objects.filter(pool=pool).values_list("item__external_id", "query__query_id",
                                                           "document__doc_id")
    lines = []
    for (name, agent), table in scores.items():
        for pair, query_id, doc_id in units:
            score = table.get((query_id, doc_id), table["*", "*"])
            lines.append(json.dumps({"item": pair, "annotator": name, "annotator_agent": agent,
                                     "value": {doc_id: score}}))
    return lines


def import_judgments(pool: Pool) -> int:
    stream = io.BytesIO(("\n".join(judgment_lines(pool)) + "\n").encode("utf-8"))
    return import_annotations(stream, "judgments.tsv", pool.task).added


def evaluate(collection: Collection) -> Evaluation:
    """The worker's evaluation, run here (as the report command runs the report job); unchanged → no work."""
    evaluation, _ = Evaluation.objects.get_or_create(collection=collection)
    control.submit(Evaluation.objects.filter(pk=evaluation.pk), superseding=True)
    evaluations.run_evaluation(collection.pk, claimed_by="demo_retrieval")
    return Evaluation.objects.get(collection=collection)
