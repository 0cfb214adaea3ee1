"""Model work goes to the `models` queue and everything else to the default one (settings.CELERY_TASK_ROUTES):
with two real workers, one per queue, as a GPU machine and a CPU machine would run them, each task is
executed by its own queue's worker only. Results carry the worker's name (CELERY_RESULT_EXTENDED in
tests/settings.py)."""
from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command

from agreement.core.reports import request_report
from agreement.model_runs.execution import start_run
from agreement.model_runs.models import EmbeddingModel, ModelRun
from agreement.model_runs.tasks import embed_chunk
from agreement.models import Report
from tests import model_data as data

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_model_run_goes_to_the_models_worker_and_a_report_to_the_default_worker(start_worker) -> None:
    start_worker("-Q", "models", "-n", "models@%h")
    start_worker("-Q", "celery", "-n", "default@%h")
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task = data.build_model_task("sts")
    run = start_run(task, EmbeddingModel.objects.get(name="minilm"))

    embedded = embed_chunk.delay(run.chunks.get().pk)
    assert embedded.get(timeout=180) == "scored"  # the run's only chunk: its worker scores the run too
    assert embedded.worker.startswith("models@") and embedded.queue == "models"
    run = ModelRun.objects.get(pk=run.pk)
    assert run.status == "done" and run.device == "cpu" and run.scores["gold"]["main_score"] is not None

    request_report(task.pk)  # queues agreement.compute_report after commit (autocommit here: at once)
    deadline = time.monotonic() + 120
    while Report.objects.get(task=task).status != "done" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert Report.objects.get(task=task).computed_in.startswith("worker default@")
