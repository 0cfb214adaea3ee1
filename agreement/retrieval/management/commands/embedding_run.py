"""python manage.py embedding_run COLLECTION --model NAME [--name RANKING] [--k 100] [--split DOCS] [--no-cache]: a
registered model's ranking, here, or with --split as Celery chunks of DOCS documents that any number of workers take
and merge; --no-cache (here only) writes nothing to the embedding cache.

The model comes from the model registry (`add_model`); its vectors go through the registry's embedding cache
(agreement.model_runs.embedding.embed), so a second ranking, or another collection holding the same texts,
encodes nothing twice. Ranking is the exact cosine top-K of measures/retrieval/cosine_top_k.py.
"""
from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from agreement.model_runs.backends import BackendError
from agreement.model_runs.device import worker_device
from agreement.model_runs.embedding import embed
from agreement.model_runs.embedding_store import writes_off
from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Collection
from agreement.retrieval.split_rankings import start_split_embedding_ranking
from agreement.retrieval.system_rankings import embedding_ranking


class Command(BaseCommand):
    help = "Rank every subset of a collection by cosine similarity of a registered model's embeddings."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("collection")
        parser.add_argument("--model", required=True, help="a model of the registry (python manage.py add_model)")
        parser.add_argument("--name", help="ranking name (default: the model's name)")
        parser.add_argument("--k", type=int, default=100, help="documents per query (default 100)")
        parser.add_argument("--split", type=int, metavar="DOCS",
                            help="queue the ranking as chunks of DOCS documents for the Celery workers instead of "
                                 "running it here (their top-K are merged exactly)")
        parser.add_argument("--no-cache", action="store_true",
                            help="write nothing to the embedding cache (what it holds is still read); not with "
                                 "--split, whose workers share vectors through it")

    def handle(self, *args: Any, **opts: Any) -> None:
        collection = Collection.objects.filter(name=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection named {opts['collection']!r}")
        model = EmbeddingModel.objects.filter(name=opts["model"]).first()
        if model is None:
            raise CommandError(f"no model named {opts['model']!r} (add it with python manage.py add_model)")
        if not model.is_encoder:
            raise CommandError(f"{model.name} is a classical metric: it has no vectors to rank by cosine "
                               f"(use bm25_run for BM25)")

        def vectors(texts: Sequence[str]) -> np.ndarray:
            return embed(model, texts)

        if opts["no_cache"] and opts["split"] is not None:
            raise CommandError("--no-cache goes without --split: split workers share vectors through the cache")
        try:
            if opts["split"] is not None:
                ranking = start_split_embedding_ranking(collection, opts["name"] or model.name, model, k=opts["k"],
                                                docs_per_chunk=opts["split"])
                self.stdout.write(f"ranking {ranking.name} on collection {collection.name}: "
                                  f"{ranking.chunks.count()} chunks queued for the workers")
                return
            with writes_off() if opts["no_cache"] else nullcontext():
                ranking = embedding_ranking(collection, opts["name"] or model.name, vectors, k=opts["k"],
                                            device=worker_device())
        except (ValueError, BackendError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"ranking {ranking.name} on collection {collection.name}: {ranking.entries.count()} ranked "
                          f"documents, depth {ranking.depth}, on {ranking.device}")
