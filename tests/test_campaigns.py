"""Campaigns in the app (agreement/campaigns/, docs/campaigns.md): the refusals of `campaign start`, the headline
campaign driven through the loop API until it stops itself, stop by hand, and a review run by a real worker."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from agreement.campaigns import reviewing
from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status
from agreement.campaigns.models import Campaign
from agreement.campaigns.starting import start_campaign
from annotation.models import Annotation, Batch, Hold
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.campaign_app import JUDGE, answer_everything, api_as, sts_study
from tests.conftest import make_annotator


@pytest.mark.django_db
def test_bad_starts_are_refused_naming_the_problem_and_write_nothing(alice):
    task, _truth = sts_study("STS small", n_items=300)
    unjudged, _ = sts_study("STS unjudged", n_items=300, judge=False)
    make_annotator("bashir", {"ara-Arab": "native"})
    cases = [
        (dict(task="no such task"), "task: no task named 'no such task'"),
        (dict(judge="nobody"), "judge: no annotator named 'nobody'"),
        (dict(judge="alice"), "'alice' is a person"),
        (dict(task=unjudged.name), "judge: judge 'judge-llm' answered 0 of the 300 items of task 'STS unjudged'"),
        (dict(task=unjudged.name), "and it cannot be run: 'judge-llm' has no endpoint configured"),
        (dict(annotators=["bashir"]), "'bashir' do(es) not list the task's language eng-Latn"),
        (dict(budget_labels=20), "budget_labels: 20 labels pay for 20 items at overlap 1, fewer than the first batch"),
        (dict(target=0.05, budget_labels=200), "the best reachable half-width is about ±0."),
        (dict(sampling="confidence"), "sampling: by the judge's confidence is not built for campaigns yet"),
        (dict(estimand="share:yes"), "estimand: 'share:yes' is not one of this task's estimands (similarity)"),
    ]
    for change, message in cases:
        args = {"task": task.name, "judge": JUDGE, "target": 0.2, **change}
        with pytest.raises(CampaignError) as refused:
            start_campaign("C", args.pop("task"), args.pop("judge"), args.pop("target"), **args)
        assert message in str(refused.value), (change, str(refused.value))
    for reserved in ("start", "a/b"):  # the API's own path beside a campaign's name; a name with a slash
        with pytest.raises(CampaignError, match=f"name: '{reserved}' cannot name a campaign"):
            start_campaign(reserved, task, JUDGE, 0.2)
    assert not Campaign.objects.exists() and not Batch.objects.exists()
    alice.languages.all().delete()
    with pytest.raises(CampaignError, match="people: no active human annotator lists the task's language eng-Latn"):
        start_campaign("C", task, JUDGE, 0.2)
    with pytest.raises(CommandError, match="task: no task named 'nope'"):
        call_command("campaign", "start", "C", "--task", "nope", "--judge", JUDGE, "--target-half-width", "0.2")
    assert not Campaign.objects.exists() and not Batch.objects.exists()


@pytest.mark.django_db
def test_the_headline_campaign_stops_itself_within_target_covering_the_pool_mean(alice, capsys):
    """Issue 34, "Done when" #2: 1,500 STS pairs, a judge of ρ ≈ 0.75, ±0.12; alice answers through the loop API
    with the pool's true values; the review (the worker's job, called here) runs after each batch is answered."""
    task, truth = sts_study("HUME-STS sim")
    pool_mean = float(np.mean(list(truth.values())))
    call_command("campaign", "start", "sts-headline", "--task", task.name, "--judge", JUDGE,
                 "--target-half-width", "0.12", "--annotators", "alice", "--seed", "1", "--format", "json")
    started = json.loads(capsys.readouterr().out)
    assert started["state"] == "collecting" and len(started["batches"]) == 1
    campaign = Campaign.objects.get(name="sts-headline")
    truth_by_pk = {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}
    client, rounds = api_as(alice), 0
    while Campaign.objects.get(pk=campaign.pk).state == "collecting" and rounds < 10:
        assert answer_everything(client, truth_by_pk) > 0
        reviewing.review_campaign(campaign.pk)
        rounds += 1
    campaign.refresh_from_db()
    data = status(campaign)
    assert data["state"] == "done" and data["reason"] == "target reached"
    assert data["half_width"] <= 0.12 and data["ci_low"] <= pool_mean <= data["ci_high"]
    assert data["labels_used"] <= 0.75 * data["people_only_labels"]
    # the figures of this seed: batches of 250 and 137 items; stopped at the 353rd label (387 answered) with
    # 2.618 [2.510, 2.750] around the pool's 2.634; people alone 661 labels (0.534); the judge's ρ 0.786
    assert [b["items"] for b in data["batches"]] == [250, 137]
    assert (data["labels_used"], data["labels_received"], data["people_only_labels"]) == (353, 387, 661)
    assert data["estimate"] == pytest.approx(2.618, abs=5e-4) and data["rho"] == pytest.approx(0.786, abs=5e-4)
    assert all(not b["open"] for b in data["batches"]) and not Hold.objects.exists()
    assert client.get(f"/api/v1/batches/{data['batches'][-1]['id']}/next/").status_code == 204  # stopped
    call_command("campaign", "status", "sts-headline", "--format", "text")
    assert "people alone would need" in capsys.readouterr().out


def test_stop_by_hand_hands_out_nothing_more_but_stores_the_answer_on_screen(alice):
    """Stopping loses nothing a person holds: alice's item on screen when the campaign stops is answered (201) and
    stored, bob (holding nothing) gets nothing, and after her answer neither does she; the stored review is the
    one before the stop (docs/batches.md, "Stopping a batch")."""
    task, _truth = sts_study("STS stop", n_items=300)
    bob = make_annotator("bob", {"eng-Latn": "native"})
    campaign = start_campaign("stop-me", task, JUDGE, 0.3, annotators=["alice", "bob"])
    client = api_as(alice)
    batch = campaign.batches.get()
    on_screen = client.get(f"/api/v1/batches/{batch.pk}/next/")
    assert on_screen.status_code == 200 and Hold.objects.count() == 1
    call_command("campaign", "stop", "stop-me")
    campaign.refresh_from_db()
    assert (campaign.state, campaign.reason, campaign.review) == ("done", "stopped by hand", {})
    stopped = Batch.objects.get(pk=batch.pk)
    assert (stopped.is_open, stopped.hands_out, Hold.objects.count()) == (True, False, 1)
    assert status(campaign)["batches"][0]["open"] is False
    assert api_as(bob).get(f"/api/v1/batches/{batch.pk}/next/").status_code == 204
    # no longer listed as open to bob (the loop API and the my-batches page); still to alice, who holds an item
    assert api_as(bob).get("/api/v1/my/batches/").json() == []
    assert [row["batch"]["id"] for row in client.get("/api/v1/my/batches/").json()] == [batch.pk]
    page = Client()
    page.force_login(alice.user)
    assert batch.name in page.get("/annotate/").content.decode()
    page.force_login(bob.user)
    assert batch.name not in page.get("/annotate/").content.decode()
    reload = client.get(f"/api/v1/batches/{batch.pk}/next/")  # the held item comes back, nothing else
    item_id = on_screen.json()["item"]["id"]
    assert reload.status_code == 200 and reload.json()["item"]["id"] == item_id
    posted = client.post(on_screen.json()["answer_url"], {"value": 3.2}, format="json")
    assert posted.status_code == 201, posted.content
    stored = Annotation.objects.get(item_id=item_id, annotator=alice)
    assert (stored.value, stored.batch_id, Hold.objects.count()) == (3.2, batch.pk, 0)
    assert client.get(f"/api/v1/batches/{batch.pk}/next/").status_code == 204
    assert client.get("/api/v1/my/batches/").json() == []  # her held item answered: the stopped batch is gone
    page.force_login(alice.user)
    assert batch.name not in page.get("/annotate/").content.decode()
    reviewing.review_campaign(campaign.pk)  # a review sent before the stop changes nothing
    campaign.refresh_from_db()
    assert (campaign.reason, campaign.review) == ("stopped by hand", {})


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_answers_through_the_api_make_a_real_worker_review_and_stop_the_campaign(start_worker, settings):
    """Nothing calls the review here: each answer's commit asks a debounced `agreement.review_campaign` through
    the job layer, and a real Celery worker runs it, hands out the next batch and stops the campaign."""
    settings.CAMPAIGN_REVIEW_DEBOUNCE_SECONDS = 0.5
    start_worker(concurrency=2)
    alice = make_annotator("alice", {"eng-Latn": "native"})
    task, truth = sts_study("STS worker", seed=3, n_items=300)
    truth_by_pk = {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}
    campaign = start_campaign("by-the-worker", task, JUDGE, 0.3, annotators=["alice"], seed=2)
    client, deadline = api_as(alice), time.monotonic() + 120
    while Campaign.objects.get(pk=campaign.pk).state == "collecting":
        assert time.monotonic() < deadline, status(campaign)
        answer_everything(client, truth_by_pk)
        time.sleep(0.2)
    campaign.refresh_from_db()
    data = status(campaign)
    pool_mean = float(np.mean(list(truth.values())))
    assert data["reason"] == "target reached" and campaign.reviewed_at is not None
    assert data["half_width"] <= 0.3 and data["ci_low"] <= pool_mean <= data["ci_high"]
    assert all(not b["open"] for b in data["batches"]) and not Hold.objects.exists()


@pytest.mark.django_db
def test_the_api_starts_reads_and_stops_with_the_commands_code(alice, carol, dave):
    task, _truth = sts_study("STS api", n_items=300)
    admin, researcher = APIClient(), APIClient()
    admin.force_authenticate(carol)
    researcher.force_authenticate(dave)
    asked = {"name": "via-api", "task": task.name, "judge": JUDGE, "target_half_width": 0.3,
             "annotators": ["alice"], "budget_labels": 200}
    assert researcher.post("/api/v1/campaigns/start/", asked, format="json").status_code == 403
    refused = admin.post("/api/v1/campaigns/start/", asked | {"budget_labels": 10}, format="json")
    assert refused.status_code == 400 and refused.json()["detail"].startswith("budget_labels: 10 labels pay for 10")
    assert not Campaign.objects.exists()
    started = admin.post("/api/v1/campaigns/start/", asked, format="json")
    assert started.status_code == 201, started.content
    data = researcher.get("/api/v1/campaigns/via-api/").json()
    assert {"state", "reason", "estimate", "ci_low", "ci_high", "half_width", "labels_used", "labels_budget",
            "people_only_labels", "batches"} <= set(data)
    assert (data["state"], data["reason"], data["estimate"], data["labels_used"], data["labels_budget"]) == (
        "collecting", "", None, 0, 200)
    assert data["batches"][0]["open"] and data["batches"][0]["answered_items"] == 0
    assert [c["name"] for c in researcher.get("/api/v1/campaigns/").json()] == ["via-api"]
    assert researcher.post("/api/v1/campaigns/via-api/stop/").status_code == 403
    stopped = admin.post("/api/v1/campaigns/via-api/stop/").json()
    assert (stopped["state"], stopped["reason"]) == ("done", "stopped by hand")


@pytest.mark.django_db
def test_answers_ask_one_review_per_window_and_again_when_the_one_sent_was_lost(alice, settings):
    """The debounce (agreement/campaigns/review_queue.py): messages are kept in the job layer's outbox until the
    commit (which a test transaction never reaches), so they can be counted there."""
    from datetime import timedelta

    from django.utils import timezone

    from agreement.campaigns.models import CampaignReview
    from agreement.campaigns.review_job import run_review
    from agreement.campaigns.review_queue import REVIEW_JOB, request_reviews
    from hume.jobs.models import UnsentMessage

    settings.CAMPAIGN_REVIEW_DEBOUNCE_SECONDS = 10
    task, _truth = sts_study("STS debounce", n_items=300)
    campaign = start_campaign("debounced", task, JUDGE, 0.3, annotators=["alice"])
    sent = UnsentMessage.objects.filter(task=REVIEW_JOB)
    for _answer in range(5):
        request_reviews(task.pk)
    assert sent.count() == 1 and sent.get().args == [campaign.pk] and sent.get().options == {"countdown": 10.0}
    assert run_review(campaign.pk).startswith("no item labelled yet")  # the job starts: answers ask a new review
    request_reviews(task.pk)
    assert sent.count() == 2
    request_reviews(task.pk)
    assert sent.count() == 2
    now = timezone.now()  # the one sent 71 s ago never started (10 s countdown + 60 s): sent again
    CampaignReview.objects.filter(pk=campaign.pk).update(started_at=now - timedelta(seconds=80),
                                                         requested_at=now - timedelta(seconds=71))
    request_reviews(task.pk)
    assert sent.count() == 3
    call_command("campaign", "stop", "debounced")
    request_reviews(task.pk)  # a campaign that is done asks nothing
    assert sent.count() == 3


@pytest.mark.django_db
def test_a_campaign_never_hands_out_more_than_its_budget(alice):
    """A weak judge (noise sd 3.0) and a budget of the judge-alone plan's 93 labels for ±0.35 on 300 pairs: a
    first batch of 47 items, the next capped at the 46 the budget has left; then `budget spent` at 93 labels,
    ±0.353, the interval at the budget's last label still covering the pool's mean (the same draws run through
    the engine alone give the same figures)."""
    task, truth = sts_study("STS budget", seed=6, n_items=300, judge_noise=3.0)
    campaign = start_campaign("on-a-budget", task, JUDGE, 0.35, annotators=["alice"], budget_labels=93)
    truth_by_pk = {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}
    client, rounds = api_as(alice), 0
    while Campaign.objects.get(pk=campaign.pk).state == "collecting" and rounds < 5:
        answer_everything(client, truth_by_pk)
        reviewing.review_campaign(campaign.pk)
        rounds += 1
    data = status(Campaign.objects.get(pk=campaign.pk))
    pool_mean = float(np.mean(list(truth.values())))
    assert (data["reason"], data["labels_used"], data["labels_budget"]) == ("budget spent", 93, 93)
    assert [b["items"] for b in data["batches"]] == [47, 46]
    assert data["half_width"] == pytest.approx(0.353, abs=5e-4) and data["ci_low"] <= pool_mean <= data["ci_high"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_review_whose_worker_died_is_run_again_by_the_job_layer_and_the_campaign_stops(start_worker, settings):
    """The review is a job type of the layer (agreement/campaigns/review_queue.py `JOB`): a review claimed by a
    worker that then died (its lease never renewed) and no later answer is found by the layer's one finder
    (`recovery.lapsed_keys`), sent again by its beat entry (`requeue_lapsed`), and a real worker runs it: the
    campaign stops (`budget spent`, the budget test's 93 labels), on the review's second claim."""
    from agreement.campaigns.models import CampaignReview
    from agreement.campaigns.review_queue import JOB
    from hume.jobs import recovery
    from hume.jobs.lease import claim
    from hume.jobs.registry import TYPES

    settings.CAMPAIGN_REVIEW_DEBOUNCE_SECONDS = 3600  # the answers' own messages never come within the test
    alice = make_annotator("alice", {"eng-Latn": "native"})
    task, truth = sts_study("STS lost review", seed=6, n_items=300, judge_noise=3.0)
    campaign = start_campaign("lost-review", task, JUDGE, 0.35, annotators=["alice"], budget_labels=93)
    truth_by_pk = {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}
    client = api_as(alice)
    assert answer_everything(client, truth_by_pk) == 47
    reviewing.review_campaign(campaign.pk)  # the second batch, capped by the budget
    assert answer_everything(client, truth_by_pk) == 46
    assert TYPES["campaign review"] is JOB and JOB.cap() == settings.JOB_MAX_ATTEMPTS
    settings.JOB_LEASE_SECONDS = 1
    assert claim(CampaignReview.objects.filter(pk=campaign.pk), claimed_by="doomed") is not None  # then it died
    time.sleep(1.2)
    assert recovery.lapsed_keys(JOB) == [campaign.pk]
    assert recovery.requeue_lapsed().get("campaign review") == [campaign.pk]
    start_worker()
    deadline = time.monotonic() + 60
    while Campaign.objects.get(pk=campaign.pk).state == "collecting":
        assert time.monotonic() < deadline, "the recovered review did not stop the campaign"
        time.sleep(0.2)
    data = status(Campaign.objects.get(pk=campaign.pk))
    assert (data["reason"], data["labels_used"]) == ("budget spent", 93)
    review = CampaignReview.objects.get(pk=campaign.pk)
    deadline = time.monotonic() + 10
    while review.status != "done" and time.monotonic() < deadline:
        time.sleep(0.2)
        review.refresh_from_db()
    assert (review.status, review.attempts, review.claim_token, review.error) == ("done", 2, None, "")
