"""Exact top-K on a device (measures/retrieval/device_search.py) ranks as numpy does (cosine_top_k.py): the same
documents in the same order, ties to the lower document index — at the K-th place too.

The vectors are small integers scaled by 1/8, so every dot product is exact in float32 whatever the order of
summation (BLAS, cuBLAS, torch on the CPU): equal scores are really equal, and the rankings must be identical.
Runs with torch on the CPU everywhere, and on `cuda:0` where torch sees a GPU."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from measures.retrieval import device_search
from measures.retrieval.cosine_top_k import merge_top_k, top_k
from measures.retrieval.device_search import exact_top_k, top_k_on_device

DEVICES = ["cpu"] + (["cuda:0"] if torch.cuda.is_available() else [])


def tied_corpus(seed: int = 7, docs: int = 600, queries: int = 40, dims: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Integer-valued vectors with many exact ties: every document appears three times, some far more."""
    rng = np.random.default_rng(seed)
    base = rng.integers(-3, 4, size=(docs // 3, dims)).astype(np.float32) / 8
    base[10] = 3 / 8  # the largest vector there is: nothing else scores as high against it
    corpus = np.vstack([base, base[::-1], base])  # each document three times, at different indices
    corpus[50:80] = corpus[10]  # a tie of 30 + 3 documents: wider than the device path's margin
    query_vecs = rng.integers(-3, 4, size=(queries, dims)).astype(np.float32) / 8
    query_vecs[0] = corpus[10]  # its best documents are the 33-wide tie: 10, 50..79, 389 and 410
    return query_vecs, corpus


def reference(queries: np.ndarray, docs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ranking by its definition: score descending, then document index ascending (a full stable sort)."""
    scores = queries @ docs.T
    order = np.lexsort((np.broadcast_to(np.arange(docs.shape[0]), scores.shape), -scores), axis=1)[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


@pytest.mark.parametrize("k", [1, 5, 20, 100, 700])
def test_numpy_top_k_breaks_every_tie_by_the_lower_index(k: int) -> None:
    queries, docs = tied_corpus()
    idx, val = top_k(queries, docs, k, chunk=7, doc_chunk=64, normalised=True)
    want_idx, want_val = reference(queries, docs, min(k, len(docs)))
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(val, want_val)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", [1, 5, 20, 100, 700])
def test_torch_top_k_equals_numpy_top_k_on_a_corpus_with_ties(device: str, k: int) -> None:
    queries, docs = tied_corpus()
    idx, val = top_k_on_device(queries, docs, k, device)
    want_idx, want_val = top_k(queries, docs, k, normalised=True)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(val, want_val)
    assert idx[0, :min(k, 33)].tolist() == ([10, *range(50, 80), 389, 410])[:min(k, 33)]


@pytest.mark.parametrize("device", DEVICES)
def test_torch_top_k_over_many_document_blocks(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 37 documents (the running best merged 17 times) give the same ranking as one block."""
    monkeypatch.setattr(device_search, "_document_block", lambda *args: 37)
    queries, docs = tied_corpus(seed=11)
    np.testing.assert_array_equal(top_k_on_device(queries, docs, 25, device)[0],
                                  top_k(queries, docs, 25, normalised=True)[0])


@pytest.mark.parametrize("device", DEVICES)
def test_exact_top_k_normalises_like_top_k(device: str) -> None:
    rng = np.random.default_rng(3)
    queries, docs = rng.normal(size=(30, 24)).astype(np.float32), rng.normal(size=(500, 24)).astype(np.float32)
    idx, val = exact_top_k(queries, docs, 10, device=device)
    want_idx, want_val = top_k(queries, docs, 10)
    np.testing.assert_array_equal(idx, want_idx)  # random floats: no score within rounding of another
    np.testing.assert_allclose(val, want_val, atol=1e-6)


def test_merged_split_tops_equal_the_whole_ranking_with_ties() -> None:
    """Split runs merge each chunk's top-K by document id: ties across chunks go to the lower id too."""
    queries, docs = tied_corpus()
    parts = [(idx + start, val) for start in range(0, len(docs), 150)
             for idx, val in [top_k(queries, docs[start:start + 150], 40, normalised=True)]]
    merged_idx, merged_val = merge_top_k(parts, 40)
    want_idx, want_val = top_k(queries, docs, 40, normalised=True)
    np.testing.assert_array_equal(merged_idx, want_idx)
    np.testing.assert_array_equal(merged_val, want_val)
