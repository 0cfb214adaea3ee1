"""Exact cosine top-K on the worker's device: numpy (cosine_top_k.py) on the CPU, torch on a GPU, one ranking.

`exact_top_k` is what embedding rankings call. On an accelerator it ranks with torch as follows.

Documents travel to the device in blocks sized so one block of scores fits the device's free memory; each
block's best `k + TIE_MARGIN` per query are merged into a running best on the device (matrix product +
`torch.topk`). `torch.topk` breaks ties in no stated order, so the last step is numpy's: the candidates come
back to the CPU and are ordered by (score descending, document index ascending). That equals cosine_top_k.py's
ranking whenever the candidates hold every document tied with the k-th: true when the (k + margin)-th score
is strictly lower than the k-th. A query for which it is not (a tie wider than the margin) is ranked again
from its full row of scores by cosine_top_k.py's own `best_per_row`.
"""
from __future__ import annotations

import numpy as np

from measures.retrieval.cosine_top_k import best_per_row, search_inputs, top_k

TIE_MARGIN = 8
QUERY_BLOCK = 1024
SCORE_MEMORY_SHARE = 0.25  # of the device's free memory, for one block of float32 scores


def _document_block(torch: object, device: object, queries: int, documents: int, width: int) -> int:
    """Documents per block: one (query block × documents) float32 score matrix in a share of free memory."""
    rows = min(queries, QUERY_BLOCK)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        budget = int(free * SCORE_MEMORY_SHARE)
    else:
        budget = 256 << 20
    return max(width, min(documents, budget // (4 * rows * 3)))  # scores, topk's copy and the merge


def top_k_on_device(queries: np.ndarray, docs: np.ndarray, k: int, device: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices, cosines), each (queries, min(k, documents)), of L2-normalised float32 `queries` and `docs`."""
    import torch

    dev = torch.device(device)
    n_docs = len(docs)
    k = min(k, n_docs)
    width = min(n_docs, k + TIE_MARGIN)
    step = _document_block(torch, dev, len(queries), n_docs, width)
    on_device = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float32)).to(dev)
    best_values = torch.empty((len(queries), 0), dtype=torch.float32, device=dev)
    best_indices = torch.empty((len(queries), 0), dtype=torch.int64, device=dev)
    for offset in range(0, n_docs, step):
        block = torch.from_numpy(np.ascontiguousarray(docs[offset:offset + step], dtype=np.float32)).to(dev)
        values, indices = [], []
        for start in range(0, len(queries), QUERY_BLOCK):
            scores = on_device[start:start + QUERY_BLOCK] @ block.T
            top = torch.topk(scores, min(width, scores.shape[1]), dim=1)
            values.append(top.values)
            indices.append(top.indices + offset)
        merged_values = torch.cat([best_values, torch.cat(values)], dim=1)
        merged_indices = torch.cat([best_indices, torch.cat(indices)], dim=1)
        keep = torch.topk(merged_values, min(width, merged_values.shape[1]), dim=1)
        best_values, best_indices = keep.values, torch.gather(merged_indices, 1, keep.indices)
    values, indices = best_values.cpu().numpy(), best_indices.cpu().numpy()
    chosen, out_values = best_per_row(values, k, keys=indices)
    out_indices = np.take_along_axis(indices, chosen, axis=1)
    tied = np.flatnonzero(values.min(axis=1) >= out_values[:, -1]) if width < n_docs else []
    if len(tied):  # the tie at the K-th place may reach past the margin: rank those rows from their full rows
        rows = on_device[torch.from_numpy(tied).to(dev)]
        full = np.concatenate([(rows @ torch.from_numpy(np.ascontiguousarray(
            docs[offset:offset + step], dtype=np.float32)).to(dev).T).cpu().numpy()
            for offset in range(0, n_docs, step)], axis=1)
        out_indices[tied], out_values[tied] = best_per_row(full, k)
    return out_indices, out_values


def exact_top_k(query_vecs: np.ndarray, doc_vecs: np.ndarray, k: int, *, device: str = "cpu",
                normalised: bool = False, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """similarity.top_k's (indices, cosines), computed on `device` (a torch device name; "cpu": numpy, in
    query chunks of `chunk`)."""
    if device == "cpu" or not len(query_vecs) or not len(doc_vecs):
        return top_k(query_vecs, doc_vecs, k, chunk, normalised=normalised)
    queries, docs = search_inputs(query_vecs, doc_vecs, k, normalised=normalised)
    return top_k_on_device(queries, docs, k, device)
