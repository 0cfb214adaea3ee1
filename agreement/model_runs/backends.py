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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agreement.model_runs.device import DeviceError, Placement, placement
from agreement.model_runs.folders import (  # noqa: F401 (MODEL_FILES, check_model_folder: imported from here too)
    MODEL_FILES,
    BackendError,
    check_model_folder,
    model_folder,
)
from measures.model_runs import classical

EXPLICIT_TOKENIZERS_PARALLELISM = "TOKENIZERS_PARALLELISM" in os.environ
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


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
    """A local sentence-transformers model on the worker's device (agreement/model_runs/device.py).

    On the CPU it is `SentenceTransformer.encode`. On an accelerator, tokenisation (CPU work) of the next batch
    runs in a thread while the device computes the current one (`encode_overlapped`), since tokenising is what
    limits a small model on a GPU; the vectors agree with `encode`'s to float rounding."""

    encodes_in_background = True  # similarity.embed may encode the next slice in a thread while it stores

    def __init__(self, folder: Path, batch_size: int = 32, where: Placement | None = None) -> None:
        self.placement = where or Placement(device="cpu", half_precision=False, batch_size=None)
        self.device = self.placement.device
        if self.placement.accelerated and not EXPLICIT_TOKENIZERS_PARALLELISM:
            os.environ["TOKENIZERS_PARALLELISM"] = "true"  # every core tokenises a batch for the device
        self.model = _load_sentence_transformer(str(folder), self.device, self.placement.half_precision)
        self.batch_size = self.placement.batch_size or batch_size
        self.dimensions = int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if self.placement.accelerated:
            return encode_overlapped(self.model, list(texts), self.batch_size)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def encode_overlapped(model: Any, texts: list[str], batch_size: int) -> np.ndarray:
    """(n, d) float32 vectors as `model.encode` computes them (longest texts batched together), with each
    batch tokenised in a background thread while the device still works on the one before.

    The vectors stay on the device until the end (one copy back, no synchronisation per batch)."""
    import torch
    from sentence_transformers.util import batch_to_device

    tokenise = getattr(model, "preprocess", None) or model.tokenize  # sentence-transformers < 6.2: tokenize
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [[texts[i] for i in order[start:start + batch_size]] for start in range(0, len(texts), batch_size)]
    outputs = []
    model.eval()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise") as tokeniser, torch.inference_mode():
        upcoming = tokeniser.submit(tokenise, batches[0])
        for number in range(len(batches)):
            features = upcoming.result()
            if number + 1 < len(batches):
                upcoming = tokeniser.submit(tokenise, batches[number + 1])
            embedded = model(batch_to_device(features, model.device))["sentence_embedding"]
            outputs.append(embedded.float())
        stacked = torch.cat(outputs).cpu().numpy()
    vectors = np.empty_like(stacked)
    vectors[order] = stacked
    return vectors


@functools.lru_cache(maxsize=4)
def _load_sentence_transformer(folder: str, device: str = "cpu", half_precision: bool = False) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(folder, device=device, local_files_only=True)
    except Exception as exc:  # a broken folder fails in many library-specific ways; say which folder
        raise BackendError(f"{folder}: cannot load as a sentence-transformers model: {exc}") from None
    return model.half() if half_precision else model


# ---------------------------------------------------------------- openai-compatible /v1/embeddings


class OpenAIEncoder:
    device = "remote"  # the endpoint computes; what it runs on is its own business

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
        if model.max_requests is not None:  # the endpoint's spend cap (annotation/llm/spend.py)
            from annotation.llm.spend import RequestBudget

            label = f"the embeddings endpoint of model {model.name!r}"
            self.client.budget = RequestBudget(type(model), model.pk, label)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from agreement.model_runs.endpoint import embed_batches

        check_texts(texts)
        vectors = embed_batches(self.client, self.model_id, texts, self.batch_size, self.dimensions)
        if len(vectors):
            self.dimensions = vectors.shape[1]
        return vectors


# ---------------------------------------------------------------- classical metrics


class ClassicalScorer:
    device = "cpu"

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


def device_of(model: Any) -> str:
    """Where this worker computes the model's vectors or scores (BackendError: the configured device is missing)."""
    if model.backend == "openai":
        return OpenAIEncoder.device
    if model.backend != "sentence-transformers":
        return ClassicalScorer.device
    return worker_placement(model).device


def worker_placement(model: Any) -> Placement:
    """The worker's device choice for a local model (BackendError naming the model when the device is missing)."""
    try:
        return placement()
    except DeviceError as exc:
        raise BackendError(f"{model.name}: {exc}") from None


def load_backend(model: Any) -> Encoder | PairScorer:
    """The ready-to-use backend of a registry row; BackendError when it cannot be loaded as configured."""
    if model.backend == "sentence-transformers":
        folder = shipped_model_folder() if model.shipped else model_folder(model)
        where = worker_placement(model)
        try:
            return SentenceTransformerEncoder(folder, batch_size=model.batch_size, where=where)
        except BackendError as exc:  # a run's error is read by researchers: the model's name, not its folder
            raise BackendError(str(exc).replace(str(folder), f"model {model.name!r}")) from None
    if model.backend == "openai":
        return OpenAIEncoder(model)
    if model.backend == "classical":
        return ClassicalScorer(model.metric)
    raise BackendError(f"unknown backend {model.backend!r}")
