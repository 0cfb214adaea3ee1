"""Retrieval for SAGE's fifth category (SAGE, arXiv:2509.21310, Appendix A.6): rank a corpus, score it at nDCG@10.

nDCG@10 is trec_eval's `ndcg_cut.10` through pytrec_eval (the package `pytrec-eval-terrier`, pinned in
requirements.txt), as MTEB and BEIR compute it: linear gains, the standard of the project (docs/reports.md).
The paper's A.8 prints exponential gains 2^rel − 1; on binary qrels, the only kind SAGE uses, the two are
identical. A.6: "queries with no relevant documents in the corpus are excluded".
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pytrec_eval

Qrels = Mapping[str, Mapping[str, int]]
Run = dict[str, dict[str, float]]
Matrix = Callable[[Sequence[str], Sequence[str]], np.ndarray]

RUN_DEPTH = 100  # documents kept per query; nDCG@10 reads the first 10 after trec_eval's own sort


def judged_queries(qrels: Qrels) -> list[str]:
    """The queries that have at least one relevant document (A.6 leaves the others out)."""
    return sorted(qid for qid, docs in qrels.items() if any(rel > 0 for rel in docs.values()))


def rank(query_ids: Sequence[str], query_texts: Sequence[str], doc_ids: Sequence[str],
         doc_texts: Sequence[str], matrix: Matrix) -> Run:
    """A run: for each query, its RUN_DEPTH most similar documents with their similarity as the score.

    `matrix(queries, docs)` returns the (n_queries × n_docs) similarity matrix.
    """
    scores = np.asarray(matrix(list(query_texts), list(doc_texts)), dtype=float)
    if scores.shape != (len(query_ids), len(doc_ids)) or not np.all(np.isfinite(scores)):
        raise ValueError(f"the similarity gave a matrix of shape {scores.shape} (or non-finite values); "
                         f"expected {(len(query_ids), len(doc_ids))} finite values")
    depth = min(RUN_DEPTH, len(doc_ids))
    run: Run = {}
    for row, qid in enumerate(query_ids):
        top = np.argsort(-scores[row], kind="stable")[:depth]
        run[qid] = {doc_ids[j]: float(scores[row, j]) for j in top}
    return run


def ndcg_at_10(qrels: Qrels, run: Run) -> float:
    """Mean nDCG@10 over the judged queries (trec_eval `ndcg_cut.10`); a query missing from the run scores 0."""
    queries = judged_queries(qrels)
    if not queries:
        raise ValueError("no query has a relevant document: nDCG@10 is undefined")
    evaluator = pytrec_eval.RelevanceEvaluator({q: dict(qrels[q]) for q in queries}, {"ndcg_cut.10"})
    per_query = evaluator.evaluate({q: run.get(q, {}) for q in queries if run.get(q)})
    return float(np.mean([per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in queries]))
