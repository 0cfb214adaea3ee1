"""Registering a model: what the `add_model` command and the models page (/models/) share.

`build` makes the unsaved row from the command's options (a folder is checked against MODEL_DIRS and loaded
once for its file hash and dimensions; an endpoint is only recorded; a classical metric records its library's
version); `register` saves it unless a row of that name exists, refusing a name taken by other settings.
"""
from __future__ import annotations

from typing import Any

from agreement.model_runs.backends import check_model_folder, folder_hash, load_backend
from agreement.model_runs.folders import BackendError, inside_roots
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
            raise BackendError("--backend sentence-transformers needs --path DIR or --shipped")
        model.revision = folder_hash(folder)
        model.dimensions = load_backend(model).dimensions
    elif backend == "openai":
        if not options["base_url"] or not options["model_id"]:
            raise BackendError("--backend openai needs --base-url URL and --model-id ID")
        model.base_url, model.model_id = options["base_url"].rstrip("/"), options["model_id"]
        model.api_key_env, model.dimensions = options["api_key_env"] or "", options["dimensions"]
        model.revision = options["revision"] or ""
    else:
        if options["metric"] not in CLASSICAL_METRICS:
            raise BackendError(f"--backend classical needs --metric {'|'.join(CLASSICAL_METRICS)}")
        model.metric, model.revision = options["metric"], classical_revision(options["metric"])
    if options["mteb_name"]:
        model.mteb_name = options["mteb_name"]
    model.full_clean(exclude=["name"])
    return model


def register(model: EmbeddingModel) -> tuple[EmbeddingModel, bool]:
    """(the row, True) once saved; (the existing row, False) if one of that name has these settings;
    BackendError if the name is taken by other settings."""
    existing = EmbeddingModel.objects.filter(name=model.name).first()
    if existing is None:
        model.save()
        return model, True
    changed = [f for f in IDENTITY_FIELDS if getattr(existing, f) != getattr(model, f)]
    if changed:
        raise BackendError(f"a model named {model.name!r} exists with other settings ({', '.join(changed)}); "
                           "choose another name")
    return existing, False
