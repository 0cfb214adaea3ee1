"""Rankings made here: exact cosine top-K of an embedding model, and BM25 (bm25s), stored like imported rankings.

The embedding side takes any ``embed(texts) -> (n, d) array`` callable, so the model registry
(``agreement.model_runs.embedding.embed`` bound to a model) plugs in without this module knowing models.
Each subset is ranked on its own corpus; the whole ranking is written in one transaction. A reranked ranking takes
any ``rerank(query, documents) -> scores`` callable (a cross-encoder) over another ranking's top-K.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

import bm25s
import numpy as np
from django.db import transaction

from agreement.model_runs.stages import timed
from agreement.retrieval.models import Collection, Document, Query, Ranking, RankingEntry, Subset
from agreement.retrieval.rankings import finish_ranking, store_entries
from measures.mteb_texts import document_text, query_text
from measures.retrieval.device_search import exact_top_k

Embed = Callable[[list[str]], np.ndarray]
BM25_STOPWORDS = {"eng": "en"}  # bm25s's English list; other languages keep every word


def subset_texts(subset: Subset) -> tuple[list[int], list[str], list[int], list[str]]:
    """(query pks, query texts, document pks, document texts) in key order, written as MTEB writes them
    (measures/mteb_texts.py: the instruction after the query; title + text)."""
    queries = list(Query.objects.filter(subset=subset).order_by("pk").values_list("pk", "text", "instruction"))
    docs = list(Document.objects.filter(subset=subset).order_by("pk").values_list("pk", "title", "text"))
    return ([q[0] for q in queries], [query_text(q[1], q[2]) for q in queries],
            [d[0] for d in docs], [document_text(d[1], d[2]) for d in docs])


def embed_all(embed: Embed, texts: Sequence[str], batch: int) -> np.ndarray:
    parts = []
    for start in range(0, len(texts), batch):
        part = np.asarray(embed(list(texts[start:start + batch])))
        if part.ndim != 2 or len(part) != len(texts[start:start + batch]):
            raise ValueError(f"embed returned shape {part.shape} for {len(texts[start:start + batch])} texts")
        parts.append(part)
    return np.vstack(parts)


def new_ranking(collection: Collection, name: str, method: str, **fields: object) -> Ranking:
    """A new ranking row, done unless ``fields`` say otherwise (a ranking made here is written in the same
    transaction as its entries; one for the workers is created queued)."""
    _refuse_taken_name(collection, name)
    return Ranking.objects.create(collection=collection, name=name, method=method, tag=name[:200],
                                  **{"status": Ranking.Status.DONE, **fields})


def _refuse_taken_name(collection: Collection, name: str) -> None:
    if Ranking.objects.filter(collection=collection, name=name).exists():
        raise ValueError(f"collection {collection.name!r} already has a ranking named {name!r}")


def embedding_ranking(collection: Collection, name: str, embed: Embed, *, k: int = 100, chunk: int = 1024,
                      batch: int = 65536, device: str = "cpu") -> Ranking:
    """Rank every subset's corpus for its queries by exact cosine similarity of `embed`'s vectors, on `device`
    (a torch device name: "cpu" ranks with numpy, a GPU with torch; the same ranking, device_search.py).

    Texts are embedded and ranked before the ranking's transaction opens: only the ranking and its entries are
    written all or nothing. Inside one transaction, a million documents' cache writes piled up uncommitted
    (SQLite's write-ahead log cannot be checkpointed under an open transaction, and every cache lookup read
    through it); the cache keeps what was embedded either way, as a model run's chunks do. `batch` texts go
    to `embed` at a time: large, so its cache lookups and writes overlap the encoder (similarity.embed)."""
    _refuse_taken_name(collection, name)  # before any encoding; checked again inside the transaction
    ranked = []
    for subset in collection.subsets.all():
        with timed("read"):
            query_pks, query_texts, doc_pks, doc_texts = subset_texts(subset)
        if not query_pks or not doc_pks:
            continue
        query_vecs, doc_vecs = embed_all(embed, query_texts, batch), embed_all(embed, doc_texts, batch)
        with timed("rank"):
            idx, val = exact_top_k(query_vecs, doc_vecs, k, device=device, chunk=chunk)
        del query_vecs, doc_vecs
        ranked.append((query_pks, np.asarray(doc_pks)[idx], val))
    with transaction.atomic():
        ranking = new_ranking(collection, name, Ranking.Method.EMBEDDING)
        ranking.device = device
        ranking.save(update_fields=["device"])
        for query_pks, docs, val in ranked:
            with timed("entries write"):
                rows = zip(query_pks, docs, val, strict=True)
                store_entries(ranking, ((q, int(d), float(s)) for q, row_d, row_s in rows
                                        for d, s in zip(row_d, row_s, strict=True)))
        with timed("ranks"):
            finish_ranking(ranking)
    return ranking


def bm25_scores(query_texts: Sequence[str], doc_texts: Sequence[str], k: int,
                language: str) -> tuple[np.ndarray, np.ndarray]:
    """bm25s (Lucene's BM25, k1 1.5, b 0.75) top-k document indices and scores per query."""
    stopwords = BM25_STOPWORDS.get(language.split("-")[0])
    tokens = bm25s.tokenize(list(doc_texts), stopwords=stopwords, return_ids=False, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    queries = bm25s.tokenize(list(query_texts), stopwords=stopwords, return_ids=False, show_progress=False)
    return retriever.retrieve(queries, k=min(k, len(doc_texts)), show_progress=False)


def bm25_ranking(collection: Collection, name: str, *, k: int = 100) -> Ranking:
    """BM25 over each subset; documents sharing no term with the query (score 0) are not retrieved, as in Lucene."""
    with transaction.atomic():
        ranking = new_ranking(collection, name, Ranking.Method.BM25)
        fill_bm25_ranking(ranking, k=k)
    return ranking


def fill_bm25_ranking(ranking: Ranking, *, k: int) -> None:
    """Write BM25's top-`k` of every subset of the ranking's collection into `ranking` (one with no entries yet)."""
    store_bm25_ranking(ranking, bm25_entries(ranking.collection, k=k))


def bm25_entries(collection: Collection, *, k: int) -> list[tuple[int, int, float]]:
    """(query pk, document pk, score) of BM25's top-`k` per query of every subset; reads, writes nothing.
    Kept apart from the write so a worker computes with no transaction open (`actions.rank_bm25`)."""
    entries: list[tuple[int, int, float]] = []
    for subset in collection.subsets.all():
        query_pks, query_texts, doc_pks, doc_texts = subset_texts(subset)
        if not query_pks or not doc_pks:
            continue
        idx, val = bm25_scores(query_texts, doc_texts, k, subset.language)
        docs = np.asarray(doc_pks)[idx]
        entries += [(q, int(d), float(s)) for q, row_d, row_s in zip(query_pks, docs, val, strict=True)
                    for d, s in zip(row_d, row_s, strict=True) if s > 0]
    return entries


def store_bm25_ranking(ranking: Ranking, entries: list[tuple[int, int, float]]) -> None:
    """Store `entries` as the ranking's and rank them (trec_eval's order), in one transaction."""
    with transaction.atomic():
        store_entries(ranking, entries)
        finish_ranking(ranking)


Rerank = Callable[[str, list[str]], Sequence[float]]


def reranked_ranking(base: Ranking, name: str, rerank: Rerank, *, depth: int = 100) -> Ranking:
    """Re-sort each query's top-`depth` of `base` by `rerank(query, documents)` scores (a cross-encoder, or
    any callable): like the study's reranked configurations, it reorders but never recovers a document the
    base ranking missed, so Recall@depth equals the base ranking's."""
    with transaction.atomic():
        ranking = new_ranking(base.collection, name, Ranking.Method.RERANKED)
        ranking.base_ranking = base
        ranking.save(update_fields=["base_ranking"])
        entries = (RankingEntry.objects.filter(ranking=base, rank__lte=depth).order_by("query_id", "rank")
                   .values_list("query_id", "query__text", "query__instruction", "document_id", "document__title",
                                "document__text"))
        for query_pk, rows in groupby(entries.iterator(chunk_size=2000), key=lambda row: row[0]):
            rows = list(rows)
            query = query_text(rows[0][1], rows[0][2])
            scores = list(rerank(query, [document_text(r[4], r[5]) for r in rows]))
            if len(scores) != len(rows):
                raise ValueError(f"rerank returned {len(scores)} scores for {len(rows)} documents")
            store_entries(ranking, [(query_pk, r[3], float(s)) for r, s in zip(rows, scores, strict=True)])
        finish_ranking(ranking)
    return ranking
