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

from agreement.model_runs.backends import BackendError, check_model_folder, folder_hash, load_backend
from agreement.model_runs.folders import inside_roots
from agreement.model_runs.models import CLASSICAL_METRICS, EmbeddingModel
from agreement.model_runs.shipped import MINILM_MTEB_NAME, minilm_folder

IDENTITY_FIELDS = ("backend", "path", "shipped", "base_url", "model_id", "metric", "revision")


def classical_revision(metric: str) -> str:
    from importlib.metadata import version

    package = {"levenshtein": "rapidfuzz", "rouge": "rouge-score", "bm25": "bm25s", "tfidf": "scikit-learn",
               "jaccard": None}[metric]
    return f"{package}=={version(package)}" if package else "tokens-v1"


def build(name: str, options: dict[str, Any]) -> EmbeddingModel:
    backend = options["backend"]
    model = EmbeddingModel(name=name, backend=backend, batch_size=options["batch_size"])
    if backend == "sentence-transformers":
        if options["shipped"]:
            folder, model.shipped, model.mteb_name = minilm_folder(), True, MINILM_MTEB_NAME
        elif options["path"]:
            folder = check_model_folder(inside_roots(options["path"]))  # the admin's check too (models.py)
            model.path = str(folder)
        else:
            raise CommandError("--backend sentence-transformers needs --path DIR or --shipped")
        model.revision = folder_hash(folder)
        model.dimensions = load_backend(model).dimensions
    elif backend == "openai":
        if not options["base_url"] or not options["model_id"]:
            raise CommandError("--backend openai needs --base-url URL and --model-id ID")
        model.base_url, model.model_id = options["base_url"].rstrip("/"), options["model_id"]
        model.api_key_env, model.dimensions = options["api_key_env"] or "", options["dimensions"]
        model.revision = options["revision"] or ""
    else:
        if options["metric"] not in CLASSICAL_METRICS:
            raise CommandError(f"--backend classical needs --metric {'|'.join(CLASSICAL_METRICS)}")
        model.metric, model.revision = options["metric"], classical_revision(options["metric"])
    if options["mteb_name"]:
        model.mteb_name = options["mteb_name"]
    model.full_clean(exclude=["name"])
    return model


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
        existing = EmbeddingModel.objects.filter(name=name).first()
        if existing is not None:
            changed = [f for f in IDENTITY_FIELDS if getattr(existing, f) != getattr(model, f)]
            if changed:
                raise CommandError(f"a model named {name!r} exists with other settings ({', '.join(changed)}); "
                                   "choose another name")
            self.stdout.write(f"{name}: already registered (identity {existing.identity[:16]})")
            return
        model.save()
        self.stdout.write(f"{name}: registered ({model.backend}, identity {model.identity[:16]}, "
                          f"dimensions {model.dimensions or '-'})")
