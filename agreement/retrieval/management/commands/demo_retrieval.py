"""python manage.py demo_retrieval: the demo's retrieval study (agreement/retrieval/demo_collection.py), idempotent.

The shipped all-MiniLM-L6-v2 is registered as `demo_models` registers it; the collection demo/retrieval/ is
imported, ranked by BM25 and MiniLM, pooled, judged (two demo people and an LLM judge) and evaluated.
"""
from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from agreement.model_runs.models import EmbeddingModel
from agreement.model_runs.shipped import MINILM_NAME
from agreement.retrieval.demo_collection import load
from agreement.retrieval.models import Evaluation


class Command(BaseCommand):
    help = "Load the demo retrieval study: a small collection, BM25 and MiniLM rankings, a judged pool, its evaluation."

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("add_model", MINILM_NAME, "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
        collection = load(EmbeddingModel.objects.get(name=MINILM_NAME), say=self.stdout.write)
        evaluation = Evaluation.objects.get(collection=collection)
        self.stdout.write(f"collection {collection.name}: {collection.rankings.count()} rankings, evaluation "
                          f"{evaluation.status} ({len(evaluation.rows)} rows); see /retrieval/")
