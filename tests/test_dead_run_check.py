"""A run whose worker died is taken over by a running worker, with no page poll and no worker start (issue 14
item 3): Celery beat inside every worker (`-B`, settings.CELERY_BEAT_SCHEDULE) re-queues reports and model-run
chunks whose lease lapsed every DEAD_RUN_CHECK_SECONDS (15 s, the production value, used here)."""
from __future__ import annotations

import time
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from agreement.model_runs.embedding import embed
from agreement.model_runs.execution import start_run
from agreement.model_runs.models import EmbeddingModel, ModelRun, RunChunk
from agreement.models import Report
from agreement.retrieval.models import Collection, Ranking, RankingEntry
from agreement.retrieval.models import RankingChunk as SplitChunk
from agreement.retrieval.system_rankings import embedding_ranking, new_ranking
from hume.jobs.recovery import lapsed_keys
from hume.jobs.registry import TYPES
from tests import model_data as data
from tests.embeddings_server import EmbeddingsServer, Reply
from tests.retrieval_helpers import load_minifact
from tests.test_report_worker_crash import small_task

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
BOUND = settings.DEAD_RUN_CHECK_SECONDS + 20  # one check, then the run itself


def settle_after_start() -> None:
    """Let the started worker's own start-up resumption look at the still-empty tables, so what follows can
    only be found by the periodic check."""
    time.sleep(2)


def wait_for(condition, timeout: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout:.0f} s")


def test_the_beat_schedule_checks_reports_and_chunks_every_15_seconds() -> None:
    assert settings.DEAD_RUN_CHECK_SECONDS == 15
    assert {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()} == {
        "jobs.requeue_lapsed": 15}  # one entry: every registered job type (hume/jobs/recovery.py)


def test_a_report_whose_lease_lapsed_is_requeued_and_finished_by_a_running_worker(start_worker) -> None:
    task = small_task("lapsed-lease")
    start_worker()
    settle_after_start()
    long_ago = timezone.now() - timedelta(minutes=5)
    Report.objects.create(task=task, status=Report.Status.RUNNING, stage="answers read", progress=25,
                          requested_at=long_ago, started_at=long_ago, claim_token=uuid.uuid4(),
                          lease_expires_at=timezone.now() - timedelta(seconds=1))  # its worker died: no message
    lapsed_at = time.monotonic()

    report = wait_for(lambda: Report.objects.filter(task=task, status=Report.Status.DONE).first(), BOUND)

    assert time.monotonic() - lapsed_at < BOUND
    assert report.requested_at > long_ago  # re-queued through request_report, as the check does
    assert (report.attempts, report.computations) == (1, 1)
    assert report.result["n_rows_read"] == 24  # small_task: two annotators on twelve items
    assert report.result["agreement"]["cohen_kappa_mean"] == pytest.approx(2 / 3)


@pytest.mark.usefixtures("local_llm_endpoints")
def test_chunks_whose_lease_lapsed_are_requeued_and_the_run_finished_by_a_running_worker(start_worker) -> None:
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply() for _ in range(20)]) as server:
        model = EmbeddingModel.objects.create(name="remote", backend="openai", base_url=server.base_url,
                                              model_id="embed-small", max_retries=0, timeout_seconds=10)
        start_worker()
        settle_after_start()
        run = start_run(task, model, chunk_texts=4)  # no message sent: as if a worker had died holding each chunk
        RunChunk.objects.filter(run=run).update(status=RunChunk.Status.RUNNING, claim_token=uuid.uuid4(),
                                                lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert lapsed_keys(TYPES["model-run chunk"]) == sorted(run.chunks.values_list("id", flat=True))
        assert not lapsed_keys(TYPES["model-run scoring"])

        finished = wait_for(lambda: ModelRun.objects.filter(pk=run.pk, status="done").first(), BOUND)

    assert len(set(server.texts_sent())) == 14
    assert finished.chunks_done == 4 and finished.predictions.count() == 7
    assert finished.scores["gold"]["main_score"] is not None


def test_a_split_retrieval_run_whose_chunk_claim_lapsed_is_finished_by_a_running_worker(start_worker) -> None:
    """One chunk claimed by a worker that died (its lease, JOB_LEASE_SECONDS, lapsed), one never claimed, and
    no message left: the periodic check sends one, a running worker ranks both and merges, and the ranking
    equals the one-process run's."""
    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    model, collection = EmbeddingModel.objects.get(), Collection.objects.get()
    single = embedding_ranking(collection, "single", lambda texts: embed(model, texts), k=3)
    start_worker()
    settle_after_start()
    split = new_ranking(collection, "split", Ranking.Method.EMBEDDING)
    subset = collection.subsets.order_by("pk").first()
    size = subset.documents.count()
    dead_since = timezone.now() - timedelta(seconds=1)
    SplitChunk.objects.bulk_create([
        SplitChunk(ranking=split, subset=subset, model=model, k=3, doc_start=0, doc_end=size // 2,
                   status=SplitChunk.Status.RUNNING, claimed_by="dead-worker", lease_expires_at=dead_since),
        SplitChunk(ranking=split, subset=subset, model=model, k=3, doc_start=size // 2, doc_end=size)])
    assert lapsed_keys(TYPES["split-ranking chunk"]) == [split.pk]

    wait_for(lambda: Ranking.objects.filter(pk=split.pk, depth__gt=0).first(), BOUND)

    assert not SplitChunk.objects.filter(ranking=split).exclude(status="done").exists()
    expected = list(RankingEntry.objects.filter(ranking=single, query__subset=subset).order_by("query_id", "rank")
                    .values_list("query_id", "rank", "document_id"))
    got = list(RankingEntry.objects.filter(ranking=split).order_by("query_id", "rank")
               .values_list("query_id", "rank", "document_id"))
    assert got == expected and len(got) == 3 * subset.queries.count()
    assert lapsed_keys(TYPES["split-ranking chunk"]) == []


def test_the_split_run_check_names_lapsed_and_unmerged_runs_only() -> None:
    """Live claims and pending chunks are left to their messages; a merged run is done."""
    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    model, collection = EmbeddingModel.objects.get(), Collection.objects.get()
    subset = collection.subsets.order_by("pk").first()
    lapsed = timezone.now() - timedelta(seconds=1)
    live = timezone.now() + timedelta(seconds=settings.JOB_LEASE_SECONDS)
    runs = {}
    for name, statuses in {"live": [("running", live), ("queued", None)],
                           "lapsed": [("running", lapsed), ("done", None)],
                           "unmerged": [("done", None), ("done", None)],
                           "merged": [("done", None)]}.items():
        runs[name] = new_ranking(collection, name, Ranking.Method.EMBEDDING)
        SplitChunk.objects.bulk_create([SplitChunk(ranking=runs[name], subset=subset, model=model, k=3, doc_start=i,
                                                   doc_end=i + 1, status=status, lease_expires_at=at, claimed_by="w")
                                        for i, (status, at) in enumerate(statuses)])
    query, document = subset.queries.first(), subset.documents.first()
    RankingEntry.objects.create(ranking=runs["merged"], query=query, document=document, rank=1, score=0.5)
    assert lapsed_keys(TYPES["split-ranking chunk"]) == sorted([runs["lapsed"].pk, runs["unmerged"].pk])
