"""Scoring rankings against relevance judgments: nDCG@k, Recall@k, MAP and MRR@k, as MTEB computes them.

The app's one ranking scorer: retrieval runs (`agreement/retrieval/evaluation_inputs.py`, `evaluate_runs`) and
models run on reranking and graded-relevance items (`measures/model_scoring.py`) both score here, so
they cannot disagree. Pure numpy, no Django. MTEB scores retrieval through pytrec_eval (trec_eval's C code)
plus its own MRR (mteb 2.20.0 `_evaluators/retrieval_metrics.py`); these functions give the same numbers
(the tests check them against pytrec_eval and against MTEB's own task classes) but work on whole matrices,
so every k from 1 to 100 of many runs costs a few array operations, and they take graded judgments as
floats (pytrec_eval only takes integer relevance):

- nDCG@k: gain = the judgment when positive, else 0 (trec_eval's linear gains, not 2^rel − 1); discount
  1 / log2(rank + 1); the ideal ranking is every judged document of the query sorted by gain, cut at k.
  A query whose judgments are all 0 scores 0.
- Recall@k: relevant documents (judgment ≥ threshold) in the top k / all relevant documents of the query;
  0 when it has none.
- MAP: mean over queries of average precision over the whole ranking, relevant as for recall (trec_eval's
  `map`; MTEB's `map_at_1000` is the same for rankings of at most 1,000 documents).
- MRR@k: 1 / rank of the first document judged above 0 within the top k, else 0 (MTEB's `mrr`, which
  takes judgment > 0 as relevant, not the threshold).
- A query whose judgments are all 0 counts 0 on every figure and is averaged in (pytrec_eval evaluates every
  query with judgments; MTEB drops only a query with no judgment at all), and is counted
  (`queries_without_relevant`).
- Unjudged documents are not relevant. Queries are those both ranked and judged (as trec_eval without -c).
- Order: a ranking given as scores is sorted like trec_eval: score descending, ties by document id
  descending (byte order), see ``order_like_trec_eval``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

K_VALUES = tuple(range(1, 101))


@dataclass(frozen=True)
class Judgments:
    """Sparse judgments with integer codes: ``query[i]`` judged ``doc[i]`` at ``gain[i]``."""

    query: np.ndarray
    doc: np.ndarray
    gain: np.ndarray

    @classmethod
    def of(cls, query: Sequence[int], doc: Sequence[int], gain: Sequence[float]) -> Judgments:
        return cls(np.asarray(query, dtype=np.int64), np.asarray(doc, dtype=np.int64),
                   np.asarray(gain, dtype=np.float64))


@dataclass(frozen=True)
class Scores:
    """Mean scores over the evaluated queries; ``ks[i]`` is the cut-off of ``ndcg[i]`` and ``recall[i]``."""

    ks: tuple[int, ...]
    ndcg: np.ndarray
    recall: np.ndarray
    mrr: np.ndarray
    map: float
    queries: int
    queries_without_relevant: int
    per_query_ndcg: np.ndarray  # (queries, len(ks)), rows in the order of ``query_codes``
    query_codes: np.ndarray

    def at(self, metric: str, k: int) -> float:
        return float(getattr(self, metric)[self.ks.index(k)])


class Prepared:
    """The judgment side of an evaluation, computed once and reused for every run scored against it."""

    def __init__(self, judgments: Judgments, *, threshold: float, k_max: int) -> None:
        self.k_max, self.threshold = k_max, threshold
        self.codes, index = np.unique(judgments.query, return_inverse=True)
        self.width = int(judgments.doc.max()) + 1 if judgments.doc.size else 1
        keys = index.astype(np.int64) * self.width + judgments.doc
        order = np.argsort(keys, kind="stable")
        self.keys, self.gain = keys[order], judgments.gain[order]
        if np.any(self.keys[1:] == self.keys[:-1]):
            raise ValueError("a (query, document) pair is judged twice")
        self.relevant = self.gain >= threshold
        n = len(self.codes)
        self.num_rel = np.bincount(index, weights=(judgments.gain >= threshold), minlength=n)
        self.ideal = _ideal_gains(index, np.maximum(judgments.gain, 0.0), n, k_max)

    def lookup(self, rows: np.ndarray, ranking: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gain and relevance of each ranked document (rows: judged-query index per ranking row)."""
        valid = ranking >= 0
        keys = rows[:, None] * self.width + np.where(valid & (ranking < self.width), ranking, 0)
        at = np.clip(np.searchsorted(self.keys, keys), 0, max(len(self.keys) - 1, 0))
        hit = valid & (ranking < self.width) & (self.keys[at] == keys) if len(self.keys) else valid & False
        gain = np.where(hit, self.gain[at] if len(self.keys) else 0.0, 0.0)
        return np.maximum(gain, 0.0), hit & (self.relevant[at] if len(self.keys) else False)


def _ideal_gains(index: np.ndarray, gain: np.ndarray, n: int, k_max: int) -> np.ndarray:
    """(queries, k_max): each query's judged gains sorted descending, zero-padded."""
    order = np.lexsort((-gain, index))
    sorted_index, sorted_gain = index[order], gain[order]
    starts = np.searchsorted(sorted_index, np.arange(n))
    position = np.arange(len(order)) - starts[sorted_index]
    keep = position < k_max
    ideal = np.zeros((n, k_max))
    ideal[sorted_index[keep], position[keep]] = sorted_gain[keep]
    return ideal


def discounts(k_max: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k_max + 2))


def evaluate(ranking: np.ndarray, query_codes: np.ndarray, prepared: Prepared,
             ks: Sequence[int] = K_VALUES) -> Scores:
    """Score one run. ``ranking`` is (queries, depth) document codes in rank order, −1 where a ranking ends."""
    ks = tuple(int(k) for k in ks)
    if not ks or min(ks) < 1 or max(ks) > prepared.k_max:
        raise ValueError(f"cut-offs must lie in 1..{prepared.k_max}")
    ranking = np.asarray(ranking, dtype=np.int64).reshape(len(query_codes), -1)
    at = np.searchsorted(prepared.codes, query_codes)
    at = np.clip(at, 0, max(len(prepared.codes) - 1, 0))
    judged = (prepared.codes[at] == query_codes) if len(prepared.codes) else np.zeros(len(query_codes), bool)
    rows, ranking = at[judged], ranking[judged]
    if not len(rows):
        empty = np.zeros(len(ks))
        return Scores(ks, empty, empty, empty, 0.0, 0, 0, np.zeros((0, len(ks))), np.asarray(query_codes)[judged])
    gain, relevant = prepared.lookup(rows, ranking)
    depth = max(ranking.shape[1], prepared.k_max)
    gain = np.pad(gain, ((0, 0), (0, depth - gain.shape[1])))
    relevant = np.pad(relevant, ((0, 0), (0, depth - relevant.shape[1])))
    disc = discounts(depth)
    dcg = np.cumsum(gain[:, :prepared.k_max] * disc[:prepared.k_max], axis=1)
    idcg = np.cumsum(prepared.ideal[rows] * disc[:prepared.k_max], axis=1)
    cut = np.asarray(ks) - 1
    ndcg = np.divide(dcg[:, cut], idcg[:, cut], out=np.zeros((len(rows), len(ks))), where=idcg[:, cut] > 0)
    num_rel = prepared.num_rel[rows]
    found = np.cumsum(relevant, axis=1)
    recall = np.divide(found[:, cut], num_rel[:, None], out=np.zeros((len(rows), len(ks))),
                       where=num_rel[:, None] > 0)
    precision = found / np.arange(1, depth + 1)
    ap = np.divide((precision * relevant).sum(axis=1), num_rel, out=np.zeros(len(rows)), where=num_rel > 0)
    return Scores(ks, ndcg.mean(axis=0), recall.mean(axis=0), _reciprocal_ranks(gain > 0, cut).mean(axis=0),
                  float(ap.mean()), len(rows), int((num_rel == 0).sum()), ndcg, np.asarray(query_codes)[judged])


def _reciprocal_ranks(hit: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """(queries, len(cut)): 1 / rank of the first hit when it lies within each cut-off (index ≤ cut), else 0."""
    first = np.where(hit.any(axis=1), hit.argmax(axis=1), hit.shape[1])
    return np.where(first[:, None] <= cut[None, :], 1.0 / (first[:, None] + 1.0), 0.0)


def order_like_trec_eval(scored: Mapping[str, float]) -> list[str]:
    """Document ids by score descending, ties by id descending in byte order (trec_eval's comp_sim_docno)."""
    return [doc for doc, _ in sorted(scored.items(), key=lambda kv: (kv[1], kv[0].encode("utf-8")), reverse=True)]


def evaluate_dicts(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, float]], *,
                   threshold: float = 1.0, ks: Sequence[int] = K_VALUES) -> Scores:
    """The same scores from pytrec_eval-shaped dicts ({query: {doc: score}}, {query: {doc: relevance}})."""
    queries = {q: i for i, q in enumerate(sorted(set(run) | set(qrels)))}
    docs: dict[str, int] = {}
    code = lambda d: docs.setdefault(d, len(docs))  # noqa: E731
    rows = [(queries[q], code(d), float(g)) for q, judged in qrels.items() for d, g in judged.items()]
    judgments = Judgments.of(*zip(*rows, strict=True)) if rows else Judgments.of([], [], [])
    prepared = Prepared(judgments, threshold=threshold, k_max=max(ks))
    ranked = {q: order_like_trec_eval(scored) for q, scored in run.items()}
    depth = max((len(r) for r in ranked.values()), default=0)
    matrix = np.full((len(ranked), max(depth, 1)), -1, dtype=np.int64)
    for row, docs_of_query in enumerate(ranked.values()):
        matrix[row, :len(docs_of_query)] = [code(d) for d in docs_of_query]
    return evaluate(matrix, np.asarray([queries[q] for q in ranked], dtype=np.int64), prepared, ks)
