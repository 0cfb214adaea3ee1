"""What a researcher starts from a collection's page: BM25 and model rankings for the worker, a pool, the judging batch.

Why it is shaped this way:
- A page never ranks: a BM25 ranking is written as a queued ``Ranking`` (with its k) and a ``retrieval.rank_bm25``
  message is sent after commit. The ranking row is a job of the job layer (hume/jobs/): the worker claims it
  (`claim`, one conditional UPDATE, so a repeated message does nothing), computes with its lease renewed
  (`Lease.kept`), and writes the entries and "done" in one fenced transaction (`Lease.fenced`): a worker killed
  mid-run has written nothing, its lease lapses, and the layer's beat sends the ranking to another worker, which
  writes it whole. A failure is stored on the ranking for the page to show.
- A model ranking is a split ranking (``split_rankings``): one chunk per subset unless the researcher asks for smaller
  chunks, so the same machinery (claims, exact merge, the dead-run check) serves both buttons, and progress is
  the chunks done.
- The judging batch is an ordinary batch of the pool task, assigned to the human annotators who list the
  task's language; an LLM judge (an annotator an admin configured) optionally gets a run over the same batch.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q

from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Collection, Pool, Ranking, RankingChunk
from agreement.retrieval.split_rankings import start_split_embedding_ranking
from agreement.retrieval.system_rankings import bm25_entries, new_ranking, store_bm25_ranking
from annotation.core.batches import BatchSpec, create_batch, speakers_of
from annotation.llm.run_control import create_run
from annotation.models import Annotator, Batch
from hume import jobs
from hume.jobs.lease import LeaseLost, claim

Status = Ranking.Status


BM25_TASK = "retrieval.rank_bm25"


def start_bm25_ranking(collection: Collection, name: str, *, k: int = 100) -> Ranking:
    """A queued BM25 ranking; a worker writes it (``rank_bm25``). ValueError when the name is taken or k < 1."""
    if k < 1:
        raise ValueError("k must be at least 1")
    with transaction.atomic():
        ranking = new_ranking(collection, name, Ranking.Method.BM25, status=Status.QUEUED, k=k)
        jobs.enqueue_on_commit(BM25_TASK, ranking.pk)
    return ranking


def rank_bm25(ranking_id: int, *, claimed_by: str = "") -> str:
    """The worker's side: claim the ranking (queued, or running under a lapsed lease), compute BM25 with the lease
    kept, then store the entries and mark it done in one fenced transaction; a failure is stored with its reason.
    "not claimed" when another worker holds it or it is finished; "lost" when the lease was taken over."""
    lease = claim(Ranking.objects.filter(pk=ranking_id, method=Ranking.Method.BM25), claimed_by=claimed_by,
                  max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "not claimed"
    ranking = Ranking.objects.select_related("collection").get(pk=ranking_id)
    try:
        with lease.kept():
            entries = bm25_entries(ranking.collection, k=ranking.k or 100)
            lease.check()
            with lease.fenced():
                store_bm25_ranking(ranking, entries)
                lease.finish()
    except LeaseLost:
        return "lost"
    except Exception as exc:
        lease.fail(f"{type(exc).__name__}: {exc}")
        raise
    return "done"


def start_model_ranking(collection: Collection, name: str, model: EmbeddingModel, *, k: int = 100,
                    docs_per_chunk: int | None = None) -> Ranking:
    """A registered model's ranking for the workers: one chunk per subset, or chunks of `docs_per_chunk` documents
    (a split ranking). ValueError for a classical metric, a taken name or a bound below 1."""
    largest = max([s.documents.count() for s in collection.subsets.all()] or [1])
    return start_split_embedding_ranking(collection, name, model, k=k, docs_per_chunk=docs_per_chunk or max(largest, 1))


@dataclass(frozen=True)
class RankingProgress:
    ranking: Ranking
    chunks_done: int
    chunks: int

    @property
    def active(self) -> bool:
        return self.ranking.status in (Status.QUEUED, Status.RUNNING)


def ranking_progress(collection: Collection) -> list[RankingProgress]:
    """Every ranking of the collection with its chunk counts (0 of 0 for rankings that are not split), by name."""
    rankings = collection.rankings.order_by("name").annotate(
        n_chunks=Count("chunks"), n_done=Count("chunks", filter=Q(chunks__status=RankingChunk.Status.DONE)))
    return [RankingProgress(ranking, ranking.n_done, ranking.n_chunks) for ranking in rankings]


@dataclass(frozen=True)
class JudgingBatch:
    batch: Batch
    created: bool
    annotators: list[str]
    judge_run: int | None


def create_judging_batch(pool: Pool, *, overlap: int | None = None, judge: Annotator | None = None,
                         created_by: AbstractBaseUser | None = None) -> JudgingBatch:
    """The pool task's batch in its language, assigned to every active human annotator who lists that language
    (again: newly listed speakers are added), and, with `judge`, an LLM run over the batch sent after commit."""
    task = pool.task
    speakers = speakers_of(task.language)
    with transaction.atomic():
        batch, created = create_batch(BatchSpec(task=task, overlap=overlap), annotators=speakers,
                                      created_by=created_by)
        llm_run_id = None
        if judge is not None:
            llm_run = create_run(judge, batch=batch, created_by=created_by)
            llm_run_id = llm_run.pk
            jobs.enqueue_on_commit("annotation.llm_run", llm_run.pk)
    return JudgingBatch(batch, created, sorted(a.name for a in speakers), llm_run_id)
