"""An embedding ranking split across Celery workers: chunks of each subset's corpus, merged exactly.

Why it is shaped this way:
- `start_split_embedding_ranking` writes the ranking and one `RankingChunk` per (subset, document range) in one
  transaction and, after commit, sends one message per chunk. Every message takes chunks until none is left,
  so a lost or repeated message changes nothing but who does the work.
- A chunk is a job of the job layer (hume/jobs/): `claim_next` takes it with SELECT ... FOR UPDATE SKIP
  LOCKED, so two workers never take the same one; its lease is renewed while it ranks, so one whose worker
  died is taken over once the lease (JOB_LEASE_SECONDS) lapses, not after a fixed ten minutes. The result
  is written only through the lease, while the claim is still the writer's.
- The worker that finds every chunk done merges under a lock on the ranking: `merge_top_k` over the chunks'
  (document pk, cosine) tops is the exact top-K of the whole corpus, the same ranking as one process's
  `embedding_run`. A second merger finds the entries there and stops: the ranking is written once.
- Vectors go through the model registry's embedding cache, so each chunk's queries are encoded once.
- A worker killed outright keeps its message unacknowledged for the broker's hour-long visibility timeout.
  The job layer's periodic check sends a fresh message for a ranking with a chunk whose lease lapsed, and
  (`unmerged_rankings`, registered as the type's stranded finder) for one whose chunks are all done with the
  merge never written.
"""
from __future__ import annotations

from itertools import groupby

import numpy as np
from django.db import transaction
from django.db.models import Exists, OuterRef

from agreement.model_runs.device import add_device, worker_device
from agreement.model_runs.embedding import embed
from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Collection, Document, Query, Ranking, RankingChunk, RankingEntry
from agreement.retrieval.rankings import finish_ranking, store_entries
from agreement.retrieval.system_rankings import embed_all, new_ranking
from hume import jobs
from hume.jobs import control
from hume.jobs.lease import Lease, claim_next
from measures.mteb_texts import document_text, query_text
from measures.retrieval.cosine_top_k import l2_normalise, merge_top_k
from measures.retrieval.device_search import exact_top_k

Status = RankingChunk.Status


def start_split_embedding_ranking(collection: Collection, name: str, model: EmbeddingModel, *, k: int = 100,
                              docs_per_chunk: int = 50_000) -> Ranking:
    """Create the ranking and its chunks, and enqueue one message per chunk once they are committed."""
    if not model.is_encoder:
        raise ValueError(f"{model.name} is a classical metric: it has no vectors to rank by cosine")
    if k < 1 or docs_per_chunk < 1:
        raise ValueError("k and docs_per_chunk must be at least 1")
    with transaction.atomic():
        ranking = new_ranking(collection, name, Ranking.Method.EMBEDDING)
        chunks = []
        for subset in collection.subsets.all():
            documents = subset.documents.count()
            if documents and Query.objects.filter(subset=subset).exists():
                chunks += [RankingChunk(ranking=ranking, subset=subset, model=model, k=k, doc_start=start,
                                    doc_end=min(start + docs_per_chunk, documents))
                           for start in range(0, documents, docs_per_chunk)]
        RankingChunk.objects.bulk_create(chunks)
        if chunks:  # a ranking with nothing to rank is done (and empty) at once
            control.submit(Ranking.objects.filter(pk=ranking.pk))
            ranking.refresh_from_db()
        for _ in chunks:
            jobs.enqueue_on_commit("retrieval.embedding_chunk", ranking.pk)
    return ranking


def unmerged_rankings() -> list[int]:
    """Split rankings whose chunks are all done and whose merge was never written."""
    unfinished = RankingChunk.objects.filter(ranking=OuterRef("pk"), status__in=[Status.QUEUED, Status.RUNNING])
    return list(Ranking.objects.filter(Exists(RankingChunk.objects.filter(ranking=OuterRef("pk"))), ~Exists(unfinished),
                                   ~Exists(RankingEntry.objects.filter(ranking=OuterRef("pk"))))
                .values_list("pk", flat=True))  # each EXISTS one index probe: entries may be millions


def claim_chunk(ranking_id: int) -> Lease | None:
    """The next queued chunk of the ranking (or one whose worker's lease lapsed), now ours; None when none is left
    (a chunk claimed JOB_MAX_ATTEMPTS times without finishing fails, and with it the ranking: `work`)."""
    return claim_next(RankingChunk.objects.filter(ranking_id=ranking_id))


def gave_up(chunk: RankingChunk) -> str:
    return (f"chunk of documents {chunk.doc_start + 1}-{chunk.doc_end} was taken {chunk.attempts} times and never "
            "finished (its worker stopped, or hung past the lease, each time)")


def rank_chunk(chunk: RankingChunk) -> tuple[np.ndarray, np.ndarray]:
    """(document pks, cosines), each (queries × min(k, chunk size)), of the chunk's documents for every query."""
    queries = Query.objects.filter(subset_id=chunk.subset_id).order_by("pk").values_list("text", "instruction")
    query_texts = [query_text(text, instruction) for text, instruction in queries]  # as subset_texts writes them
    docs = (Document.objects.filter(subset_id=chunk.subset_id).order_by("pk")
            .values_list("pk", "title", "text")[chunk.doc_start:chunk.doc_end])
    doc_pks, doc_texts = [d[0] for d in docs], [document_text(d[1], d[2]) for d in docs]
    batch = chunk.model.batch_size * 8

    def vectors(texts: list[str]) -> np.ndarray:
        return embed(chunk.model, texts)

    device = worker_device()
    query_vecs = l2_normalise(embed_all(vectors, query_texts, batch))
    idx, val = exact_top_k(query_vecs, l2_normalise(embed_all(vectors, doc_texts, batch)), chunk.k, device=device,
                           normalised=True)
    add_device(Ranking, chunk.ranking_id, device)
    return np.asarray(doc_pks, dtype=np.int64)[idx], val.astype(np.float32)


def work(ranking_id: int) -> int:
    """Rank chunks of the ranking until none is left, then merge if every chunk is done; returns chunks ranked."""
    ranked = 0
    while (lease := claim_chunk(ranking_id)) is not None:
        control.start(Ranking.objects.filter(pk=ranking_id))
        chunk = RankingChunk.objects.select_related("model").get(pk=lease.pk)
        try:
            with lease.kept():
                docs, scores = rank_chunk(chunk)
        except Exception as exc:  # the page says why; the chunk's lease lapses, so the beat retries it
            control.fail(Ranking.objects.filter(pk=ranking_id), f"{type(exc).__name__}: {exc}")
            raise
        ranked += lease.finish(doc_ids=docs.tobytes(), scores=scores.tobytes())
    if control.fail_parent_of_exhausted(Ranking.objects.filter(pk=ranking_id),
                                        RankingChunk.objects.filter(ranking_id=ranking_id), gave_up):
        return ranked
    merge(ranking_id)
    return ranked


def merge(ranking_id: int) -> bool:
    """Write the ranking's entries from its chunks' tops, once: False while chunks are left or when already merged."""
    with transaction.atomic():
        ranking = Ranking.objects.select_for_update().filter(pk=ranking_id).first()
        if ranking is None or ranking.chunks.exclude(status=Status.DONE).exists() or ranking.entries.exists():
            return False
        for subset_id, chunks in groupby(ranking.chunks.order_by("subset_id", "doc_start"), key=lambda c: c.subset_id):
            query_pks = list(Query.objects.filter(subset_id=subset_id).order_by("pk").values_list("pk", flat=True))
            parts = []
            for chunk in chunks:
                width = min(chunk.k, chunk.doc_end - chunk.doc_start)
                parts.append((np.frombuffer(bytes(chunk.doc_ids), dtype=np.int64).reshape(len(query_pks), width),
                              np.frombuffer(bytes(chunk.scores), dtype=np.float32).reshape(len(query_pks), width)))
            docs, scores = merge_top_k(parts, chunk.k)
            store_entries(ranking, ((q, int(d), float(s))
                                    for q, row_d, row_s in zip(query_pks, docs, scores, strict=True)
                                    for d, s in zip(row_d, row_s, strict=True)))
        finish_ranking(ranking)
        control.finish(Ranking.objects.filter(pk=ranking_id))
    return True
