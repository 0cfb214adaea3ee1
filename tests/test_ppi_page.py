"""The report page's PPI panel: a researcher queues a judge's estimates for a worker (agreement.compute_ppi),
the worker's code stores them, and the panel shows the estimate, both intervals as a small plot and what the
labels are worth; refused input is said on the page and queues nothing; annotators get 403."""
from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from agreement.ppi.estimate_jobs import run_ppi
from agreement.ppi.models import PPIEstimate
from annotation.models import Batch
from hume.lib.celery_app import app
from tests.ppi_helpers import JUDGE, rated_likert_study

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_researcher_queues_the_estimate_and_the_panel_shows_what_the_worker_stored(dave) -> None:
    task, _ = rated_likert_study("ppi-page", 90, list(range(0, 90, 3)), seed=5)
    client = client_for(dave)
    page = client.get(reverse("agreement:detail", args=[task.pk])).content.decode()
    assert "No judge-augmented estimate yet." in page and f"<option>{JUDGE}</option>" in page
    with app.connection_for_write() as connection:
        before = connection.default_channel.client.llen("celery")
    response = client.post(reverse("agreement:ppi_request", args=[task.pk]),
                           {"judge": JUDGE, "alpha": "0.05", "target_half_width": "0.3"})
    assert response.status_code == 302 and response["Location"].endswith("#ppi")
    row = PPIEstimate.objects.get(task=task, judge=JUDGE)
    assert (row.status, row.target_half_width) == ("queued", 0.3)
    with app.connection_for_write() as connection:
        queue = connection.default_channel.client
        assert queue.llen("celery") == before + 1  # one message for a worker, nothing computed here
        queue.delete("celery")
    panel = client.get(reverse("agreement:ppi_panel", args=[task.pk])).content.decode()
    assert "hx-trigger=\"every 2s\"" in panel and "queued" in panel
    assert run_ppi(row.pk) == "done"  # what agreement.compute_ppi runs in a worker
    assert run_ppi(row.pk) == "not claimed: not queued"  # a second copy of the message does nothing
    row.refresh_from_db()
    estimate = row.document["estimates"][0]
    page = client.get(reverse("agreement:detail", args=[task.pk])).content.decode()
    assert f"your 30 labels are worth {estimate['n_effective']:.0f}" in page
    assert f"[{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]" in page
    assert '<svg class="ppi-plot"' in page and "style=" not in page.split('id="ppi"')[1].split("</section>")[0]
    assert "more human labels" in page or "not reachable" in page


def test_refused_input_is_said_on_the_page_and_queues_nothing(dave, alice) -> None:
    task, _ = rated_likert_study("ppi-page-bad", 10, [0, 1])
    client = client_for(dave)
    response = client.post(reverse("agreement:ppi_request", args=[task.pk]), {"judge": "alice", "alpha": "0.05"},
                           follow=True)
    assert "&#x27;alice&#x27; is a person" in response.content.decode()
    assert not PPIEstimate.objects.exists()
    assert client_for(alice.user).post(reverse("agreement:ppi_request", args=[task.pk]),
                                  {"judge": JUDGE}).status_code == 403
    assert client_for(alice.user).get(reverse("agreement:ppi_panel", args=[task.pk])).status_code == 403


def test_a_judge_that_missed_items_fails_the_job_with_the_reason(dave) -> None:
    from annotation.models import Annotation

    task, _ = rated_likert_study("ppi-page-missing", 10, [0, 1, 2])
    Annotation.objects.filter(annotator__user__username=JUDGE, item__external_id="4").delete()
    row = PPIEstimate.objects.create(task=task, judge=JUDGE)
    assert run_ppi(row.pk).startswith("failed: judge")
    row.refresh_from_db()
    assert row.status == "failed" and "Missing (1): '4'" in row.error
    page = client_for(dave).get(reverse("agreement:detail", args=[task.pk])).content.decode()
    assert "Missing (1): &#x27;4&#x27;" in page


def test_a_real_worker_computes_the_queued_estimate(dave, start_worker) -> None:
    task, _ = rated_likert_study("ppi-worker", 60, list(range(0, 60, 2)), seed=9)
    start_worker()
    client_for(dave).post(reverse("agreement:ppi_request", args=[task.pk]), {"judge": JUDGE, "alpha": "0.1"})
    deadline = time.monotonic() + 60
    row = PPIEstimate.objects.get(task=task)
    while row.status in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.2)
        row.refresh_from_db()
    assert row.status == "done", row.error
    assert row.document["computed_in"].startswith("worker ") and row.document["confidence"] == pytest.approx(0.9)
    assert row.document["n_labelled"] == 30


def test_an_admin_creates_the_planned_batch_from_the_panel_and_a_researcher_may_not(carol, dave) -> None:
    task, _ = rated_likert_study("ppi-page-batch", 200, list(range(0, 200, 5)), seed=8)
    row = PPIEstimate.objects.create(task=task, judge=JUDGE, target_half_width=0.3)
    assert run_ppi(row.pk) == "done"
    row.refresh_from_db()
    n_more = row.document["plan"]["n_more"]
    assert n_more > 0
    admin_page = client_for(carol).get(reverse("agreement:detail", args=[task.pk])).content.decode()
    assert f"Create a batch of these {n_more} items" in admin_page
    researcher = client_for(dave)
    assert "Create a batch of these" not in researcher.get(reverse("agreement:detail", args=[task.pk])).content.decode()
    url = reverse("agreement:ppi_batch", args=[task.pk])
    assert researcher.post(url, {"judge": JUDGE, "items": str(n_more)}).status_code == 403
    assert not Batch.objects.exists()
    response = client_for(carol).post(url, {"judge": JUDGE, "items": str(n_more)}, follow=True)
    batch = Batch.objects.get()
    assert batch.batch_items.count() == n_more and batch.created_by == carol
    assert "Created batch" in response.content.decode()
    labelled = {str(i + 1) for i in range(0, 200, 5)}
    assert not set(batch.batch_items.values_list("item__external_id", flat=True)) & labelled
