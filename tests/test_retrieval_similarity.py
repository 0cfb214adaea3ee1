"""Exact cosine top-K over matrices: the same neighbours as a full sort, whatever the chunking."""
from __future__ import annotations

import numpy as np
import pytest

from measures.retrieval.cosine_top_k import l2_normalise, merge_top_k, top_k


def brute_force(queries: np.ndarray, docs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    d = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    scores = q @ d.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


@pytest.mark.parametrize(("chunk", "doc_chunk"), [(1024, None), (7, None), (3, 50), (64, 1)])
def test_top_k_finds_the_same_neighbours_as_a_full_sort(chunk: int, doc_chunk: int | None) -> None:
    rng = np.random.default_rng(0)
    queries, docs = rng.normal(size=(40, 16)), rng.normal(size=(500, 16)) * rng.uniform(0.1, 5, size=(500, 1))
    idx, val = top_k(queries, docs, 10, chunk, doc_chunk)
    ref_idx, ref_val = brute_force(queries, docs, 10)
    assert np.array_equal(idx, ref_idx)
    np.testing.assert_allclose(val, ref_val, atol=1e-5)


def test_a_worked_example_by_hand() -> None:
    """Query (1, 0); documents (2, 0) cos 1, (1, 1) cos 0.7071, (0, 3) cos 0, (-1, 0) cos −1."""
    idx, val = top_k(np.array([[1.0, 0.0]]), np.array([[0.0, 3.0], [1.0, 1.0], [-1.0, 0.0], [2.0, 0.0]]), 3)
    assert idx.tolist() == [[3, 1, 0]]
    np.testing.assert_allclose(val, [[1.0, np.sqrt(0.5), 0.0]], atol=1e-6)


def test_k_beyond_the_corpus_returns_every_document_and_ties_keep_index_order() -> None:
    idx, val = top_k(np.ones((1, 3)), np.ones((4, 3)), 10)
    assert idx.tolist() == [[0, 1, 2, 3]] and val.shape == (1, 4)


def test_merging_partial_top_k_is_exact() -> None:
    a = (np.array([[0, 1]]), np.array([[0.9, 0.1]]))
    b = (np.array([[5, 6]]), np.array([[0.5, 0.95]]))
    idx, val = merge_top_k([a, b], 3)
    assert idx.tolist() == [[6, 0, 5]] and val.tolist() == [[0.95, 0.9, 0.5]]


def test_zero_vectors_and_mismatched_dimensions() -> None:
    assert l2_normalise(np.zeros((1, 3))).tolist() == [[0.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match="3 dimensions but documents 4"):
        top_k(np.ones((1, 3)), np.ones((2, 4)), 1)
