"""Texts to vectors and pairs to similarities, through the embedding cache.

`embed(model, texts)` returns one float32 row per text. Vectors already stored for (model identity, sha256
of the text) are read back; only the rest go to the backend, once per distinct text, and are stored a slice at
a time, one row per slice (embedding_store.py; two workers embedding the same text at once both succeed, and
either copy answers). Lookups and writes go a slice at a time beside a local model's encoding
(encoded_slices), so a GPU does not wait on them; `embedding_store.writes_off()` skips the writes.
`similarity(model, a, b)` is the cosine of those vectors for encoders, and the metric's pair score for
classical metrics (which have no vectors and are never cached: they cost less than a cache read).
"""
from __future__ import annotations

import hashlib
import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from django.conf import settings

from agreement.model_runs import embedding_store
from agreement.model_runs.backends import BackendError, Encoder, PairScorer, load_backend
from agreement.model_runs.stages import timed

COSINE_ROWS = 1024
_loaded: dict[str, Any] = {}


def text_hash(text: str) -> bytes:
    """The text's sha256 digest (32 bytes): its key in the cache, under the model's identity."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def backend_of(model: Any) -> Encoder | PairScorer:
    """The model's backend, loaded once per process and identity (a worker reuses it for every chunk)."""
    key = model.identity
    if key not in _loaded:
        _loaded[key] = load_backend(model)
    return _loaded[key]


_encoder: tuple[int, ThreadPoolExecutor] | None = None


def encoder_thread() -> ThreadPoolExecutor:
    """This process's one encoding thread, started once (a thread a call cost a model run's 79 chunks more than
    their lookups); a forked worker starts its own."""
    global _encoder
    if _encoder is None or _encoder[0] != os.getpid():
        _encoder = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="encode"))
    return _encoder[1]


def encoded_slices(backend: Any, parts: Iterable[list[tuple[bytes, str]]]
                   ) -> Iterator[tuple[list[tuple[bytes, str]], np.ndarray]]:
    """(slice, its vectors) in order. A backend that may encode in another thread (`encodes_in_background`:
    a local model, which releases the GIL in torch and the tokenizer) is kept a slice ahead: while it encodes
    slice n + 1, the caller stores slice n and `parts` (a generator: embed's cache lookups) produces slice
    n + 2, so a GPU is not left idle during the cache's reads and writes."""
    if not getattr(backend, "encodes_in_background", False):
        for part in parts:
            with timed("encode"):
                vectors = backend.encode([t for _, t in part])
            yield part, vectors
        return
    encoder = encoder_thread()
    queued: deque[tuple[list[tuple[bytes, str]], Future[np.ndarray]]] = deque()
    for part in parts:
        queued.append((part, encoder.submit(backend.encode, [t for _, t in part])))
        if len(queued) > 1:
            done, job = queued.popleft()
            with timed("encode"):  # the wait for the encoder, which runs ahead of the lookups and writes
                vectors = job.result()
            yield done, vectors
    while queued:
        done, job = queued.popleft()
        with timed("encode"):
            vectors = job.result()
        yield done, vectors


def uncached_slices(model: Any, pending: list[tuple[bytes, str]], found: dict[bytes, np.ndarray]
                    ) -> Iterator[list[tuple[bytes, str]]]:
    """The (hash, text) pairs the cache does not hold, a slice of MODEL_CACHE_SLICE_TEXTS looked up at a time
    (what the cache holds is added to `found`); looked up lazily, so the lookups run while the encoder works.
    Each slice the encoder returns is one row of the cache."""
    index = None
    size = settings.MODEL_CACHE_SLICE_TEXTS
    for start in range(0, len(pending), size):
        part = pending[start:start + size]
        with timed("lookup"):
            index = index or embedding_store.index_of(model.identity)  # once per call: the slices' ids
            found.update(embedding_store.lookup(model.identity, [h for h, _ in part], index))
        missing = [(h, t) for h, t in part if h not in found]
        if missing:
            yield missing


def vectors_by_text(model: Any, texts: Sequence[str], *, stats: dict[str, int] | None = None,
                    encoded: set[str] | None = None) -> dict[str, np.ndarray]:
    """{text: vector} of each distinct text, encoding only those the cache does not hold yet (in the model's
    dtype as stored: float32, or float16 for a model that gives float16). Nothing is stacked: a model run's
    chunk keeps them by text for its scoring. encoded: given the texts that were encoded, not read back (a batch
    of a run's chunks counts each chunk's)."""
    if not model.is_encoder:
        raise BackendError(f"{model.name} is a classical metric: it scores pairs and has no vectors")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise BackendError(f"text {i} is empty; an encoder cannot embed it")
    by_text = {t: text_hash(t) for t in dict.fromkeys(texts)}  # SAGE repeats each original 6 or 18 times
    found: dict[bytes, np.ndarray] = {}
    uncached = uncached_slices(model, [(h, t) for t, h in by_text.items()], found)
    first = next(uncached, None)  # the backend is loaded only when something is not cached
    n_encoded = 0
    if first is not None:
        for part, vectors in encoded_slices(backend_of(model), itertools.chain([first], uncached)):
            _check_vectors(model, vectors, len(part))  # stored slice by slice: a crash keeps what was done
            with timed("cache write"):
                embedding_store.store(model.identity, [h for h, _ in part], vectors)
            found.update(zip((h for h, _ in part), vectors, strict=True))
            if encoded is not None:
                encoded.update(t for _, t in part)
            _record_dimensions(model, vectors.shape[1])
            n_encoded += len(part)
    if stats is not None:
        stats["encoded"] = stats.get("encoded", 0) + n_encoded
        stats["cached"] = stats.get("cached", 0) + len(texts) - n_encoded
    return {t: found[h] for t, h in by_text.items()}


def embed(model: Any, texts: Sequence[str], *, stats: dict[str, int] | None = None,
          known: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """(n, d) float32 vectors of the texts, encoding only those the cache does not hold yet.

    known: {text: vector} this process already holds for the model (a model run's chunks, kept for its
    scoring): read before the cache, and given every vector of this call, so a run's scoring does not read
    back from the database what its chunks just wrote."""
    held = known if known is not None else {}
    wanted = [t for t in dict.fromkeys(texts) if t not in held] if held else texts
    found = vectors_by_text(model, wanted, stats=stats)
    if stats is not None and len(wanted) != len(texts):
        stats["cached"] = stats.get("cached", 0) + len(texts) - len(wanted)
    held.update(found)
    if not texts:
        return np.zeros((0, model.dimensions or 0), dtype=np.float32)
    sizes = {held[t].shape[0] for t in dict.fromkeys(texts)}
    if len(sizes) != 1:
        raise BackendError(f"{model.name}: cached vectors of different sizes {sorted(sizes)}; the cache is corrupt")
    return stacked([held[t] for t in texts])


def _check_vectors(model: Any, vectors: np.ndarray, n: int) -> None:
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise BackendError(f"{model.name}: the backend returned {vectors.shape} for {n} texts")
    if model.dimensions and vectors.shape[1] != model.dimensions:
        raise BackendError(f"{model.name}: vectors of size {vectors.shape[1]}, the model records {model.dimensions}")
    if not np.isfinite(vectors).all():
        raise BackendError(f"{model.name}: the backend returned NaN or infinite values")


def _record_dimensions(model: Any, dimensions: int) -> None:
    if model.dimensions is None and getattr(model, "pk", None):
        type(model).objects.filter(pk=model.pk, dimensions__isnull=True).update(dimensions=dimensions)
        model.dimensions = dimensions


def cosine_rows(a: np.ndarray, b: np.ndarray, rows: int = COSINE_ROWS) -> np.ndarray:
    """Cosine of a[i] and b[i] for each row, computed in float64 a slice of rows at a time (SAGE's 10,000
    documents ask 180,000 pairs at once: float64 copies of both sides whole took 1.1 GB). The row sums are
    einsum's, with no (n, d) temporaries: 2.5 times less CPU than norms of squares (a model run's 20,000 pairs),
    the same cosines to within 3e-16. A slice is 1,024 rows (3 MB of float64 at 384 dimensions): its copies
    stay in the processor's cache and the allocator reuses them, where slices of 8,192 rows (25 MB) were fresh
    memory each, whose page faults cost more than the arithmetic on a busy machine. Each row's cosine does not
    depend on the slice it is in."""
    out = np.zeros(len(a))
    for start in range(0, len(a), rows):
        a64 = np.asarray(a[start:start + rows], dtype=np.float64)
        b64 = np.asarray(b[start:start + rows], dtype=np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", a64, a64)) * np.sqrt(np.einsum("ij,ij->i", b64, b64))
        np.divide(np.einsum("ij,ij->i", a64, b64), norms, out=out[start:start + rows], where=norms > 0)
    return out


def stacked(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """(n, d) float32 of n vectors of one size d: one concatenation (np.stack handles each vector in Python)."""
    if not len(vectors):
        return np.zeros((0, 0), dtype=np.float32)
    return np.concatenate(vectors).astype(np.float32, copy=False).reshape(len(vectors), -1)


def cosine_pairs(by_text: dict[str, np.ndarray], a_texts: Sequence[str], b_texts: Sequence[str],
                 rows: int = COSINE_ROWS) -> np.ndarray:
    """(n,) cosine of by_text[a_texts[i]] and by_text[b_texts[i]], the vectors stacked a slice of `rows` pairs
    at a time: a model run's 40,000 vectors are never copied into one (n, d) array (61 MB of fresh memory)
    only to be read once, and each slice's copies are reused from one slice to the next."""
    out = np.zeros(len(a_texts))
    for start in range(0, len(a_texts), rows):
        a = stacked([by_text[t] for t in a_texts[start:start + rows]])
        b = stacked([by_text[t] for t in b_texts[start:start + rows]])
        out[start:start + rows] = cosine_rows(a, b, rows)
    return out


def similarity(model: Any, a_texts: Sequence[str], b_texts: Sequence[str], *,
               known: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """(n,) similarity of a_texts[i] and b_texts[i]: cosine for encoders, the metric for classical models
    (known: as embed's)."""
    if len(a_texts) != len(b_texts):
        raise ValueError(f"{len(a_texts)} texts a against {len(b_texts)} texts b")
    if not model.is_encoder:
        return np.asarray(backend_of(model).score_pairs(list(a_texts), list(b_texts)), dtype=float)
    vectors = embed(model, [*a_texts, *b_texts], known=known)
    n = len(a_texts)
    return cosine_rows(vectors[:n], vectors[n:])
