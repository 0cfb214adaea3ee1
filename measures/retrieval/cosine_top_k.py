"""Exact cosine top-K over embedding matrices, as the "Beyond Binary" study ranked: L2-normalise both
matrices, multiply queries by the corpus in chunks, keep each row's K best with ``argpartition``.

Pure numpy (a GPU worker ranks with torch instead: device_search.py, same ranking). Chunks bound memory to
(query chunk × document chunk) scores; the top-K of document chunks are merged exactly (``merge_top_k``), so
a corpus can also be split across workers and merged afterwards.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); an all-zero row stays zero (cosine 0 with everything)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def best_per_row(scores: np.ndarray, k: int, keys: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and scores of each row's k best, best first; ties go to the lower key (by default the
    lower column), at the k-th place too, so every path that ranks the same scores picks the same documents."""
    keys = np.broadcast_to(np.arange(scores.shape[1]), scores.shape) if keys is None else keys
    if k < scores.shape[1]:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
        for row in np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k):  # argpartition chose among ties
            candidates = np.flatnonzero(scores[row] >= kth[row])
            part[row] = candidates[np.lexsort((keys[row, candidates], -scores[row, candidates]))[:k]]
    else:
        part = np.broadcast_to(np.arange(scores.shape[1]), scores.shape).copy()
    values = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((np.take_along_axis(keys, part, axis=1), -values), axis=1)
    return np.take_along_axis(part, order, axis=1), np.take_along_axis(values, order, axis=1)


def merge_top_k(parts: Iterable[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact top-k of several (indices, scores) partial results over disjoint document ranges."""
    parts = list(parts)
    indices = np.concatenate([p[0] for p in parts], axis=1)
    scores = np.concatenate([p[1] for p in parts], axis=1)
    best, values = best_per_row(scores, min(k, scores.shape[1]), keys=indices)
    return np.take_along_axis(indices, best, axis=1), values


def search_inputs(query_vecs: np.ndarray, doc_vecs: np.ndarray, k: int, *,
                  normalised: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both matrices L2-normalised (unless they already are), after checking k and their widths."""
    if k < 1:
        raise ValueError("k and chunk must be at least 1")
    queries = query_vecs if normalised else l2_normalise(query_vecs)
    docs = doc_vecs if normalised else l2_normalise(doc_vecs)
    if queries.shape[1] != docs.shape[1]:
        raise ValueError(f"queries have {queries.shape[1]} dimensions but documents {docs.shape[1]}")
    return queries, docs


def top_k(query_vecs: np.ndarray, doc_vecs: np.ndarray, k: int, chunk: int = 1024,
          doc_chunk: int | None = None, *, normalised: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(indices, cosines), each (queries, min(k, documents)), best first, for every query's k nearest documents."""
    if chunk < 1:
        raise ValueError("k and chunk must be at least 1")
    queries, docs = search_inputs(query_vecs, doc_vecs, k, normalised=normalised)
    k = min(k, len(docs))
    step = doc_chunk or max(len(docs), 1)
    out_idx = np.empty((len(queries), k), dtype=np.int64)
    out_val = np.empty((len(queries), k), dtype=np.float32)
    for start in range(0, len(queries), chunk):
        block = queries[start:start + chunk]
        parts = []
        for offset in range(0, len(docs), step):
            idx, val = best_per_row(block @ docs[offset:offset + step].T, min(k, len(docs) - offset, step))
            parts.append((idx + offset, val))
        idx, val = parts[0] if len(parts) == 1 else merge_top_k(parts, k)
        out_idx[start:start + len(block)], out_val[start:start + len(block)] = idx, val
    return out_idx, out_val
