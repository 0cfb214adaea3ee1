"""`python manage.py prune_embedding_cache --models a,b` or `--unregistered`: delete cached vectors by model.

The cache is keyed by a model's identity (agreement/model_runs/models.py), so `--models` deletes the slices of
the identities those registered models have now; `--unregistered` deletes those of identities no registered
model has any more (a model deleted, or its weights or endpoint revision changed). Prints what it deleted.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.model_runs.embedding_store import prune
from agreement.model_runs.model_arguments import find_models
from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice


class Command(BaseCommand):
    help = "Delete the embedding cache's vectors of some models, or of identities no registered model has."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--models", help="comma-separated registered model names")
        parser.add_argument("--unregistered", action="store_true",
                            help="the vectors of every identity no registered model has")

    def handle(self, *args: Any, **options: Any) -> None:
        if bool(options["models"]) == options["unregistered"]:
            raise CommandError("name --models or --unregistered (one of them)")
        if options["models"]:
            identities = sorted({m.identity for m in find_models(options["models"]) if m.is_encoder})
        else:
            registered = {m.identity for m in EmbeddingModel.objects.all()}
            stored = EmbeddingSlice.objects.order_by().values_list("model_identity", flat=True).distinct()
            identities = sorted(set(stored) - registered)
        n_vectors = sum(EmbeddingSlice.objects.filter(model_identity__in=identities)
                        .values_list("n_vectors", flat=True))
        n_slices = prune(identities)
        self.stdout.write(f"deleted {n_slices} slices ({n_vectors} vectors) of {len(identities)} model identities")
