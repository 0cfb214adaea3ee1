"""Model runs on real Celery workers: a worker killed mid-chunk leaves a run that a new worker finishes,
without sending any text of a finished chunk to the model again (the embedding cache)."""
from __future__ import annotations

import os
import signal
import time

import pytest

from agreement.model_runs.execution import enqueue, start_run
from agreement.model_runs.models import EmbeddingModel, ModelRun, RunChunk
from tests import model_data as data
from tests.embeddings_server import EmbeddingsServer, Reply

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("local_llm_endpoints")]


def wait_for(condition, timeout: float = 90):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_a_run_survives_its_worker_being_killed_mid_chunk(start_worker, monkeypatch) -> None:
    monkeypatch.setenv("JOB_LEASE_SECONDS", "3")
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply(delay=0.5) for _ in range(40)]) as server:
        model = EmbeddingModel.objects.create(name="remote", backend="openai", base_url=server.base_url,
                                              model_id="embed-small", max_retries=0, timeout_seconds=10)
        run = start_run(task, model, chunk_texts=4)
        assert run.chunks_total == 4
        doomed = start_worker()
        enqueue(run)
        wait_for(lambda: ModelRun.objects.get(pk=run.pk).chunks_done >= 1
                 and RunChunk.objects.filter(run=run, status="running").exists())
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=30)
        killed = RunChunk.objects.get(run=run, status="running")
        sent_before = list(server.texts_sent())

        start_worker()  # production settings: the broker's hour-long redelivery is not waited for; the new
        # worker's start re-sends every unfinished chunk (model_runs.resume_runs)
        finished = wait_for(lambda: ModelRun.objects.filter(pk=run.pk, status="done").first(), timeout=120)

    sent = server.texts_sent()
    assert len(set(sent)) == 14
    resent = [t for t in sent[len(sent_before):] if t in sent_before]
    assert len(resent) <= 4  # only the killed chunk's texts can go twice; finished chunks come from the cache
    assert RunChunk.objects.get(pk=killed.pk).attempts == 2
    assert finished.scores["gold"]["main_score"] is not None
    assert finished.predictions.count() == 7
