"""What a researcher starts from a collection's page: BM25 and model runs for the worker, a pool, the judging batch.

Why it is shaped this way:
- A page never ranks: a BM25 run is written as a queued ``Run`` and a ``retrieval.bm25_run`` message is sent
  after commit; the worker claims it with a conditional UPDATE (queued → running), so a repeated message does
  nothing, and a failure is stored on the run for the page to show.
- A model run is a split run (``split_rankings``): one chunk per subset unless the researcher asks for smaller
  chunks, so the same machinery (claims, exact merge, the dead-run check) serves both buttons, and progress is
  the chunks done.
- The judging batch is an ordinary batch of the pool task, assigned to the human annotators who list the
  task's language; an LLM judge (an annotator an admin configured) optionally gets a run over the same batch.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q

from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Collection, Pool, Run, RunChunk
from agreement.retrieval.split_rankings import start_split_embedding_run
from agreement.retrieval.system_rankings import _new_run, fill_bm25_run
from annotation.batches import BatchSpec, create_batch, speakers_of
from annotation.llm.runs import create_run
from annotation.models import Annotator, Batch
from hume import jobs

Status = Run.Status


def start_bm25_run(collection: Collection, name: str, *, k: int = 100) -> Run:
    """A queued BM25 run; the worker writes it (``run_bm25``). ValueError when the name is taken or k < 1."""
    if k < 1:
        raise ValueError("k must be at least 1")
    with transaction.atomic():
        run = _new_run(collection, name, Run.Kind.BM25)
        run.status = Status.QUEUED
        run.save(update_fields=["status"])
        jobs.enqueue_on_commit("retrieval.bm25_run", run.pk, k)
    return run


def run_bm25(run_id: int, k: int) -> str:
    """The worker's side: claim the queued run, rank, mark it done (or failed, with the reason)."""
    if not Run.objects.filter(pk=run_id, kind=Run.Kind.BM25, status=Status.QUEUED).update(status=Status.RUNNING):
        return "not claimed"
    run = Run.objects.select_related("collection").get(pk=run_id)
    try:
        fill_bm25_run(run, k=k)
    except Exception as exc:
        Run.objects.filter(pk=run_id).update(status=Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    Run.objects.filter(pk=run_id).update(status=Status.DONE, error="")
    return "done"


def start_model_run(collection: Collection, name: str, model: EmbeddingModel, *, k: int = 100,
                    docs_per_chunk: int | None = None) -> Run:
    """A registered model's run for the workers: one chunk per subset, or chunks of `docs_per_chunk` documents
    (a split run). ValueError for a classical metric, a taken name or a bound below 1."""
    largest = max([s.documents.count() for s in collection.subsets.all()] or [1])
    return start_split_embedding_run(collection, name, model, k=k, docs_per_chunk=docs_per_chunk or max(largest, 1))


@dataclass(frozen=True)
class RunProgress:
    run: Run
    chunks_done: int
    chunks: int

    @property
    def active(self) -> bool:
        return self.run.status in (Status.QUEUED, Status.RUNNING)


def run_progress(collection: Collection) -> list[RunProgress]:
    """Every run of the collection with its chunk counts (0 of 0 for runs that are not split), by name."""
    runs = collection.runs.order_by("name").annotate(
        n_chunks=Count("chunks"), n_done=Count("chunks", filter=Q(chunks__status=RunChunk.Status.DONE)))
    return [RunProgress(run, run.n_done, run.n_chunks) for run in runs]


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
        run_id = None
        if judge is not None:
            run = create_run(judge, batch=batch, created_by=created_by)
            run_id = run.pk
            jobs.enqueue_on_commit("annotation.llm_run", run.pk)
    return JudgingBatch(batch, created, sorted(a.name for a in speakers), run_id)
