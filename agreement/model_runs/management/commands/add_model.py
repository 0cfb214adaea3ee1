"""`python manage.py add_model NAME --backend sentence-transformers|openai|classical ...` (idempotent).

sentence-transformers: --path DIR (a model folder) or --shipped (the MiniLM HUME ships); the folder is
checked and loaded once to record its file hash and dimensions. openai: --base-url URL --model-id ID
[--api-key-env NAME_API_KEY] [--dimensions N]; nothing is sent until a run. classical: --metric NAME.
Running it again with the same settings changes nothing; with different settings it refuses.
"""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.model_runs.backends import BackendError
from agreement.model_runs.models import CLASSICAL_METRICS, EmbeddingModel
from agreement.model_runs.registration import build, register


class Command(BaseCommand):
    help = "Register an embedding model or a classical metric (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--backend", required=True, choices=[b.value for b in EmbeddingModel.Backend])
        parser.add_argument("--path", help="sentence-transformers model folder")
        parser.add_argument("--shipped", action="store_true", help="the all-MiniLM-L6-v2 shipped with HUME")
        parser.add_argument("--base-url")
        parser.add_argument("--model-id")
        parser.add_argument("--api-key-env", help="name of the environment variable holding the key")
        parser.add_argument("--dimensions", type=int)
        parser.add_argument("--revision", help="openai: the served model's revision")
        parser.add_argument("--metric", choices=CLASSICAL_METRICS)
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--mteb-name", help="the same model's name in MTEB results")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        try:
            model = build(name, options)
        except (BackendError, ValidationError) as exc:
            raise CommandError(f"{name}: {'; '.join(getattr(exc, 'messages', [str(exc)]))}") from None
        try:
            model, created = register(model)
        except BackendError as exc:
            raise CommandError(str(exc)) from None
        if not created:
            self.stdout.write(f"{name}: already registered (identity {model.identity[:16]})")
            return
        self.stdout.write(f"{name}: registered ({model.backend}, identity {model.identity[:16]}, "
                          f"dimensions {model.dimensions or '-'})")
