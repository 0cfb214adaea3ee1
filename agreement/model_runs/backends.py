"""One interface over three backends: an Encoder (texts -> vectors) or a PairScorer (pairs -> scores).

`load_backend(model)` takes a registry row (agreement.model_runs.models.EmbeddingModel, or anything with
the same attributes) and returns an object ready to use. Loaded sentence-transformers models are kept per
process, keyed by identity, so a worker loads the weights once for all its chunks.

Nothing is ever downloaded: HF_HUB_OFFLINE is set before sentence-transformers is imported, and a folder
that is not a sentence-transformers model is refused before any loading is tried.
"""
from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agreement.model_runs import classical

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

MODEL_FILES = ("modules.json", "config_sentence_transformers.json")


class BackendError(ValueError):
    """The model cannot be loaded or used as configured; the message says what to fix."""


@runtime_checkable
class Encoder(Protocol):
    dimensions: int | None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32, one row per text, in order."""


@runtime_checkable
class PairScorer(Protocol):
    def score_pairs(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """(n,) float, the similarity of a[i] and b[i]."""


def check_texts(texts: Sequence[str]) -> None:
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise BackendError(f"text {i} is empty; an encoder cannot embed it")


# ---------------------------------------------------------------- sentence-transformers (local folder)


def check_model_folder(path: str | Path) -> Path:
    """The folder, if it holds a sentence-transformers model; BackendError naming what is missing if not."""
    folder = Path(path)
    if not folder.is_dir():
        raise BackendError(f"{folder}: no such model folder")
    if not any((folder / name).is_file() for name in MODEL_FILES):
        raise BackendError(f"{folder}: not a sentence-transformers model folder (no {' or '.join(MODEL_FILES)})")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("pytorch_model.bin")):
        raise BackendError(f"{folder}: no weights (model.safetensors or pytorch_model.bin)")
    return folder


def folder_hash(path: str | Path) -> str:
    """sha256 over the folder's files (relative names and contents): the weights' revision.

    Remembered per process for an unchanged folder (same names, sizes and modification times)."""
    folder = Path(path)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    signature = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return _hash_files(str(folder), signature)


@functools.lru_cache(maxsize=16)
def _hash_files(root: str, signature: tuple[tuple[str, int, int], ...]) -> str:
    folder = Path(root)
    digest = hashlib.sha256()
    for name, _, _ in signature:
        file = Path(name)
        digest.update(str(file.relative_to(folder)).encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


class SentenceTransformerEncoder:
    def __init__(self, folder: Path, batch_size: int = 32) -> None:
        self.model = _load_sentence_transformer(str(folder))
        self.batch_size = batch_size
        self.dimensions = int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


@functools.lru_cache(maxsize=4)
def _load_sentence_transformer(folder: str) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(folder, device="cpu", local_files_only=True)
    except Exception as exc:  # a broken folder fails in many library-specific ways; say which folder
        raise BackendError(f"{folder}: cannot load as a sentence-transformers model: {exc}") from None


# ---------------------------------------------------------------- openai-compatible /v1/embeddings


class OpenAIEncoder:
    def __init__(self, model: Any) -> None:
        from agreement.model_runs.endpoint import make_client

        key = None
        if model.api_key_env:
            key = os.environ.get(model.api_key_env)
            if not key:
                raise BackendError(f"{model.name}: environment variable {model.api_key_env} is not set here")
        self.model_id = model.model_id
        self.batch_size = model.batch_size
        self.dimensions = model.dimensions
        self.client = make_client(model.base_url, key, timeout=model.timeout_seconds, max_retries=model.max_retries)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from agreement.model_runs.endpoint import embed_batches

        check_texts(texts)
        vectors = embed_batches(self.client, self.model_id, texts, self.batch_size, self.dimensions)
        if len(vectors):
            self.dimensions = vectors.shape[1]
        return vectors


# ---------------------------------------------------------------- classical metrics


class ClassicalScorer:
    def __init__(self, metric: str) -> None:
        if metric not in classical.METRICS:
            raise BackendError(f"unknown classical metric {metric!r}: use one of {', '.join(classical.METRICS)}")
        self.metric = metric
        self.function = classical.METRICS[metric]

    def score_pairs(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return self.function(a, b)


def shipped_model_folder() -> Path:
    from agreement.model_runs.shipped import minilm_folder

    return minilm_folder()


def load_backend(model: Any) -> Encoder | PairScorer:
    """The ready-to-use backend of a registry row; BackendError when it cannot be loaded as configured."""
    if model.backend == "sentence-transformers":
        folder = shipped_model_folder() if model.shipped else check_model_folder(model.path)
        return SentenceTransformerEncoder(folder, batch_size=model.batch_size)
    if model.backend == "openai":
        return OpenAIEncoder(model)
    if model.backend == "classical":
        return ClassicalScorer(model.metric)
    raise BackendError(f"unknown backend {model.backend!r}")
