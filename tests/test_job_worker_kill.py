"""A worker SIGKILLed mid-run, under production settings (DEBUG=false), leaves a job a new worker finishes with
the same numbers, once: a SAGE run, a retrieval evaluation, a report, a model run, a split retrieval ranking,
a BM25 ranking started from the page, an LLM run, an escalation plan and a PPI estimate (issue 21 items 2 and 3).

Real `celery worker -B` processes on PostgreSQL and Redis. The doomed worker's runs pause mid-job
(tests/slow_report_worker_settings.py); its whole process group is killed, so nothing requeues or finishes
the job, and the broker would give its message back only after an hour. The job's lease
(JOB_LEASE_SECONDS, 10 s in the tests) lapses instead, and the next worker's start (`jobs.resume`) or the
beat's `jobs.requeue_lapsed` sends it again."""
from __future__ import annotations

import secrets
import time
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from agreement.core.reports import request_report
from agreement.escalation.escalation_loading import escalation_plan
from agreement.escalation.models import EscalationPlan
from agreement.escalation.plan_jobs import ask
from agreement.model_runs.embedding import embed
from agreement.model_runs.execution import enqueue, run_in_process, start_run
from agreement.model_runs.models import EmbeddingModel, ModelRun, RunChunk
from agreement.models import Report
from agreement.ppi.document import ppi_document
from agreement.ppi.estimate_jobs import request_ppi
from agreement.ppi.models import PPIEstimate
from agreement.retrieval.actions import start_bm25_ranking
from agreement.retrieval.evaluations import request_evaluation, run_evaluation
from agreement.retrieval.models import Collection, Evaluation, Ranking, RankingEntry
from agreement.retrieval.models import RankingChunk as SplitChunk
from agreement.retrieval.split_rankings import start_split_embedding_ranking
from agreement.retrieval.system_rankings import bm25_ranking, embedding_ranking
from agreement.sage.datasets import load_study
from agreement.sage.models import SageRun
from agreement.sage.named_scorers import metric_scorers
from agreement.sage.study import run_study
from annotation.llm.models import LLMRequest, LLMRun
from annotation.llm.run_control import create_run, enqueue_run
from annotation.models import Annotation
from hume import jobs
from tests import model_data as data
from tests.embeddings_server import EmbeddingsServer, Reply
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer, slow
from tests.ppi_helpers import JUDGE, rated_likert_study
from tests.retrieval_helpers import judged_collection, load_minifact
from tests.test_escalation_page import study as escalation_study
from tests.test_report_worker_crash import kill_whole_worker, small_task

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
STUDY = Path(__file__).parent / "sage_study"


@pytest.fixture
def production(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers started after this run with DEBUG=false and a real secret key, as in production."""
    monkeypatch.setenv("DEBUG", "false")
    monkeypatch.setenv("SECRET_KEY", secrets.token_urlsafe(64))
    monkeypatch.setenv("ALLOWED_HOSTS", "localhost")


def wait_for(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


@pytest.mark.usefixtures("production")
def test_a_sage_run_whose_worker_is_killed_mid_run_is_finished_by_a_new_worker_with_the_same_table(
        start_worker, dave) -> None:
    run = SageRun.objects.create(study="sage_study", folder=str(STUDY), metrics=["jaccard"], seed=0, created_by=dave)
    doomed = start_worker(report_pause=120)
    jobs.enqueue("sage.run_study", run.pk)
    held = wait_for(lambda: SageRun.objects.filter(pk=run.pk, status="running").first(), 60, "running")
    kill_whole_worker(doomed)
    assert SageRun.objects.get(pk=run.pk).status == "running"  # left behind by the dead worker

    started = time.monotonic()
    start_worker()
    done = wait_for(lambda: SageRun.objects.filter(pk=run.pk).exclude(status="running").first(), 90, "finished")

    assert done.status == "done", done.error
    assert time.monotonic() - started < 90
    assert (SageRun.objects.count(), done.attempts, done.claim_token) == (1, 2, None)
    assert done.holder != held.holder  # a new worker process finished it
    expected = run_study(load_study(STUDY), metric_scorers(["jaccard"]), seed=0)  # the same seed, in-process
    assert done.table == expected


@pytest.mark.usefixtures("production")
def test_a_retrieval_evaluation_whose_worker_is_killed_mid_run_is_finished_with_the_same_rows(start_worker) -> None:
    judged_collection()
    collection = Collection.objects.get()
    doomed = start_worker(report_pause=120)
    request_evaluation(collection)
    held = wait_for(lambda: Evaluation.objects.filter(status="running").first(), 60, "running")
    kill_whole_worker(doomed)

    start_worker()
    done = wait_for(lambda: Evaluation.objects.exclude(status="running").exclude(status="queued").first(), 90,
                    "finished")

    assert done.status == "done", done.error
    assert (Evaluation.objects.count(), done.attempts, done.claim_token) == (1, 2, None)
    assert done.holder != held.holder
    rows = done.rows
    assert len(rows) == 10  # two runs × (en: qrels, two judges, their mean; da: qrels only): none lost or doubled
    assert len({(r["ranking"], r["subset"], r["reference"]) for r in rows}) == 10
    # the same numbers as computing it here, from scratch
    Evaluation.objects.filter(pk=done.pk).update(status="queued", digest="", rows=[], attempts=0)
    assert run_evaluation(collection.pk, claimed_by="test") == "computed"
    assert Evaluation.objects.get(pk=done.pk).rows == rows


@pytest.mark.usefixtures("production")
def test_a_report_whose_worker_is_killed_mid_run_is_finished_by_a_new_worker_under_production_settings(
        start_worker) -> None:
    task = small_task("killed-in-production")
    doomed = start_worker(report_pause=120)
    request_report(task.pk)
    wait_for(lambda: Report.objects.filter(task=task, status="running").first(), 60, "running")
    kill_whole_worker(doomed)

    start_worker()
    report = wait_for(lambda: Report.objects.filter(task=task, status="done").first(), 90, "done")

    assert (Report.objects.filter(task=task).count(), report.attempts, report.computations) == (1, 2, 1)
    assert report.result["agreement"]["cohen_kappa_mean"] == pytest.approx(2 / 3)  # p_o = 5/6, p_e = 1/2
    assert settings.JOB_LEASE_SECONDS == 10


def writing_bm25_entries() -> bool:
    """True while another connection, idle inside an open transaction, holds the lock an INSERT takes on the
    ranking entries (the doomed worker paused between writing a BM25 ranking's entries and committing them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                       "WHERE a.pid <> pg_backend_pid() AND a.state = 'idle in transaction' "
                       "AND l.relation = %s::regclass AND l.mode = 'RowExclusiveLock'",
                       [RankingEntry._meta.db_table])
        return cursor.fetchone()[0] > 0


@pytest.mark.usefixtures("production")
def test_a_bm25_ranking_whose_worker_is_killed_mid_write_is_written_once_by_a_new_worker(start_worker) -> None:
    """The doomed worker has ranked and written the entries inside its fenced transaction when it is killed:
    nothing of it commits, its lease lapses, and a new worker writes the ranking whole, equal to the command's."""
    load_minifact()
    collection = Collection.objects.get()
    reference = bm25_ranking(collection, "by-command", k=5)
    doomed = start_worker(report_pause=120)
    ranking = start_bm25_ranking(collection, "from-the-page", k=5)
    held = wait_for(lambda: Ranking.objects.filter(pk=ranking.pk, status="running").first(), 60, "running")
    wait_for(writing_bm25_entries, 60, "entries written, not committed")
    kill_whole_worker(doomed)
    assert Ranking.objects.get(pk=ranking.pk).status == "running"  # left behind by the dead worker
    assert not RankingEntry.objects.filter(ranking=ranking).exists()  # its uncommitted rows went with it

    start_worker()
    done = wait_for(lambda: Ranking.objects.filter(pk=ranking.pk).exclude(status__in=["queued", "running"]).first(),
                    90, "finished")

    assert done.status == "done", done.error
    assert (done.attempts, done.claim_token, done.lease_expires_at) == (2, None, None)
    assert done.holder != held.holder  # a new worker process wrote it
    expected = list(RankingEntry.objects.filter(ranking=reference).order_by("query_id", "rank")
                    .values_list("query_id", "rank", "document_id"))
    got = list(RankingEntry.objects.filter(ranking=done).order_by("query_id", "rank")
               .values_list("query_id", "rank", "document_id"))
    assert got == expected and len(got) == len(set(got)) == 12  # no row lost or doubled
    assert done.depth == reference.depth == 3


@pytest.mark.usefixtures("production", "local_llm_endpoints")
def test_a_model_run_whose_worker_is_killed_mid_chunk_is_finished_with_the_same_scores(start_worker) -> None:
    """Four chunks on a slow endpoint; the worker dies holding one. The new worker takes it over once its lease
    lapses (10 s here, 60 s in production: before the job layer, a fixed 300 s) and the run's numbers equal a
    run of the same model computed here in one process."""
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply(delay=0.5) for _ in range(60)]) as server:
        model = EmbeddingModel.objects.create(name="remote", backend="openai", base_url=server.base_url,
                                              model_id="embed-small", max_retries=0, timeout_seconds=10)
        run = start_run(task, model, chunk_texts=4)
        doomed = start_worker()
        enqueue(run)
        held = wait_for(lambda: RunChunk.objects.filter(run=run, status="running").first(), 60, "a chunk running")
        kill_whole_worker(doomed)
        start_worker()
        finished = wait_for(lambda: ModelRun.objects.filter(pk=run.pk, status="done").first(), 120, "done")
        twin = EmbeddingModel.objects.create(name="remote twin", backend="openai", base_url=server.base_url,
                                             model_id="embed-small", max_retries=0, timeout_seconds=10)
        expected = run_in_process(start_run(task, twin), poll=0.05)

    assert (finished.chunks_total, finished.chunks_done) == (4, 4)  # the killed chunk counted once
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    assert RunChunk.objects.get(pk=held.pk).attempts == 2
    assert finished.predictions.count() == 7  # one per item: none lost, none twice
    assert finished.scores["gold"]["main_score"] == pytest.approx(expected.scores["gold"]["main_score"])
    assert finished.scores["humans"]["main_score"] == pytest.approx(expected.scores["humans"]["main_score"])


@pytest.mark.usefixtures("production")
def test_a_split_run_whose_worker_is_killed_mid_chunk_is_finished_with_the_one_process_ranking(start_worker) -> None:
    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    model, collection = EmbeddingModel.objects.get(), Collection.objects.get()
    single = embedding_ranking(collection, "single", lambda texts: embed(model, texts), k=3)
    doomed = start_worker(report_pause=120)
    split = start_split_embedding_ranking(collection, "split", model, k=3, docs_per_chunk=4)
    held = wait_for(lambda: SplitChunk.objects.filter(ranking=split, status="running").first(), 60, "a chunk running")
    kill_whole_worker(doomed)

    start_worker()
    wait_for(lambda: Ranking.objects.filter(pk=split.pk, depth__gt=0).first(), 120, "merged")

    assert set(SplitChunk.objects.filter(ranking=split).values_list("status", flat=True)) == {"done"}
    assert SplitChunk.objects.get(pk=held.pk).attempts == 2
    expected = list(RankingEntry.objects.filter(ranking=single).order_by("query_id", "rank")
                    .values_list("query_id", "rank", "document_id"))
    got = list(RankingEntry.objects.filter(ranking=split).order_by("query_id", "rank")
               .values_list("query_id", "rank", "document_id"))
    assert got == expected and len(got) == len(set(got))  # the one-process ranking: no row lost or doubled


@pytest.mark.usefixtures("production", "local_llm_endpoints")
def test_an_llm_run_whose_worker_is_killed_mid_run_is_finished_without_asking_twice(
        start_worker, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One request in flight at most; the doomed worker holds the run's lease, paused after its third answer
    with nothing in flight (tests/slow_report_worker_settings.py). Its lease lapses and the new worker takes
    the run over: every item is asked exactly once (the local server counts each request) and none is lost."""
    monkeypatch.setenv(API_KEY_ENV, "sk-test-worker-5555")
    task, _items, answers = make_task("sts", 10, prefix="k")
    with ChatServer(answers, {marker: [slow(0.4, answer)] for marker, answer in answers.items()}) as server:
        judge = make_judge("judge-k", server.base_url, max_concurrency=1)
        doomed = start_worker(report_pause=120)
        run = create_run(judge.annotator, task=task)
        enqueue_run(run)
        wait_for(lambda: Annotation.objects.filter(annotator=judge.annotator).count() >= 3, 120, "3 answers")
        time.sleep(1)  # the worker reaches its pause: it claims nothing more and holds the lease
        held = LLMRun.objects.get(pk=run.pk)
        kill_whole_worker(doomed)
        answered_before = set(answers_of(judge.annotator))
        assert (held.status, held.attempts) == ("running", 1) and held.claim_token is not None
        assert len(answered_before) == 3 and sum(server.counts().values()) == 3  # nothing was in flight

        start_worker()  # the job layer sends the run again once its lease lapses
        done = wait_for(lambda: LLMRun.objects.filter(pk=run.pk).exclude(status__in=LLMRun.ACTIVE).first(), 120,
                        "finished")
        counts = server.counts()

    assert done.status == "done", done.error
    assert (done.attempts, done.claim_token, done.lease_expires_at) == (2, None, None)
    assert done.holder != held.holder  # a new worker process finished it
    assert answers_of(judge.annotator) == answers  # every item, the server's answer: none lost
    assert Annotation.objects.filter(annotator=judge.annotator).count() == 10  # none twice
    assert LLMRequest.objects.filter(annotator=judge.annotator, status="succeeded").count() == 10
    assert counts == Counter(dict.fromkeys(answers, 1))  # each item asked exactly once: no duplicate request
    assert done.http_requests == 10


@pytest.mark.usefixtures("production", "local_llm_endpoints")
def test_an_escalation_plan_whose_worker_is_killed_mid_run_is_computed_again_with_the_same_plan(start_worker) -> None:
    task = escalation_study()
    doomed = start_worker(report_pause=120)
    ask(task, ["small"], 0.15, 0.1)
    held = wait_for(lambda: EscalationPlan.objects.filter(status="running").first(), 60, "running")
    kill_whole_worker(doomed)
    assert EscalationPlan.objects.get(pk=held.pk).status == "running"  # left behind by the dead worker

    start_worker()
    done = wait_for(lambda: EscalationPlan.objects.exclude(status__in=("queued", "running")).first(), 90, "finished")

    assert done.status == "done", done.error
    assert (EscalationPlan.objects.count(), done.attempts, done.claim_token) == (1, 2, None)
    assert done.holder != held.holder
    expected = escalation_plan(task, ["small"], 0.15, 0.1, seed=done.seed)  # the same seed, in-process
    assert done.result == {**expected.result, "escalated_item_ids": expected.escalated}
    assert len(done.result["escalated_item_ids"]) == done.result["rest"]["n_escalated"] == 10


@pytest.mark.usefixtures("production")
def test_a_ppi_estimate_whose_worker_is_killed_mid_run_is_computed_again_with_the_same_numbers(start_worker) -> None:
    task, _ = rated_likert_study("ppi-killed", 60, list(range(0, 60, 2)), seed=9)
    doomed = start_worker(report_pause=120)
    request_ppi(task, JUDGE, alpha=0.1)
    held = wait_for(lambda: PPIEstimate.objects.filter(task=task, status="running").first(), 60, "running")
    kill_whole_worker(doomed)

    start_worker()
    done = wait_for(lambda: PPIEstimate.objects.filter(task=task).exclude(status__in=("queued", "running")).first(),
                    90, "finished")

    assert done.status == "done", done.error
    assert (PPIEstimate.objects.filter(task=task).count(), done.attempts, done.claim_token) == (1, 2, None)
    assert done.holder != held.holder
    expected = ppi_document(task, JUDGE, alpha=0.1, computed_in=done.document["computed_in"])
    assert {**done.document, "computed_at": None} == {**expected, "computed_at": None}  # all but the time
    assert done.document["n_labelled"] == 30


def answers_of(annotator) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return dict(Annotation.objects.filter(annotator=annotator).values_list("item__external_id", "value"))
