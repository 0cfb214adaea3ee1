"""A campaign whose judge has not labelled the task (agreement/campaigns/judge_runs.py, docs/campaigns.md "A judge
that has not labelled"): it starts the judge's LLM run and waits (`waiting for the judge`), plans its first batch
when the run finishes, fails with the reason when the run fails, and refuses a judge that cannot be run. The judge
is a real local chat-completions server (tests/llm_server.py) and the run a real Celery worker's."""
from __future__ import annotations

import re
import time

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from agreement.campaigns import reviewing
from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status
from agreement.campaigns.models import Campaign
from agreement.campaigns.starting import start_campaign
from agreement.campaigns.study_links import StudyLinkWanted
from annotation.crowd.models import StudyLink
from annotation.llm.models import LLMRun
from annotation.llm.run_control import cancel_run
from annotation.models import Annotation, Batch
from hume.jobs.models import UnsentMessage
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.campaign_app import answer_everything, api_as, sts_study
from tests.campaign_study import sts_pool
from tests.conftest import make_annotator
from tests.llm_helpers import API_KEY_ENV, make_judge
from tests.llm_server import ChatServer, Seen

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")
SEED, N_ITEMS = 3, 300
PAIR = re.compile(r"first sentence (\d+)")


def judge_answers(seen: Seen) -> float:
    """The simulated judge's whole-number answer (tests/campaign_study.py `sts_pool`) on the pair the prompt holds."""
    prompt = next(m["content"] for m in seen.body["messages"] if m["role"] == "user")
    return float(sts_pool(SEED, N_ITEMS)[1][int(PAIR.search(prompt).group(1))])


def wait_while(campaign: Campaign, state: str, seconds: float, do: object = None) -> Campaign:
    deadline = time.monotonic() + seconds
    while (current := Campaign.objects.get(pk=campaign.pk)).state == state:
        assert time.monotonic() < deadline, status(current)
        if callable(do):
            do()
        time.sleep(0.2)
    return current


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_campaign_runs_its_unlabelled_judge_then_plans_and_stops_itself(start_worker, settings, monkeypatch):
    """Nothing calls the review: the judge's run (a real worker asking the local server on every item) finishes,
    its `llm_run_finished` asks the campaigns' reviews: one plans its first batch (alice's answers do the rest),
    the other, whose budget cannot pay the plan's first batch, fails saying so; no item was asked twice."""
    settings.CAMPAIGN_REVIEW_DEBOUNCE_SECONDS = 0.5
    monkeypatch.setenv(API_KEY_ENV, "sk-test-campaign-judge")
    alice = make_annotator("alice", {"eng-Latn": "native"})
    task, truth = sts_study("STS judged by a run", seed=SEED, n_items=N_ITEMS, judge=False)
    truth_by_pk = {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}
    with ChatServer(answer_for=judge_answers) as server:
        judge = make_judge("judge-live", server.base_url, max_concurrency=8)
        campaign = start_campaign("judge-first", task, "judge-live", 0.3, annotators=["alice"], seed=2)
        # a second campaign joins the same run; its budget passes the start's early check (at least the smallest
        # first batch, 30 items) but not the plan's first batch, which needs the judge's numbers: refused then
        tight = start_campaign("too-tight", task, "judge-live", 0.3, annotators=["alice"], budget_labels=35)
        assert tight.judge_run_id == campaign.judge_run_id
        # a third, whose people are a crowd study link: the link is made with its first batch, once the run is done
        crowd = start_campaign("judge-first-crowd", task, "judge-live", 0.3, seed=3,
                               study_link=StudyLinkWanted(quota=10, completion_code="CAMP34"))
        assert crowd.judge_run_id == campaign.judge_run_id and crowd.study_link_id is None
        assert not StudyLink.objects.exists()
        data = status(campaign)
        assert (data["state"], data["reason"], data["batches"], data["judge_run"]["state"]) == (
            "waiting for the judge", "", [], "queued")
        assert data["judge_run"]["total_items"] == N_ITEMS and api_as(alice).get("/api/v1/my/batches/").json() == []
        start_worker(concurrency=2)
        campaign = wait_while(campaign, "waiting for the judge", 120)
        assert server.count == N_ITEMS
    assert campaign.state == "collecting", status(campaign)
    tight = wait_while(tight, "waiting for the judge", 30)
    assert (tight.state, tight.reason) == ("failed", "the start was refused") and not tight.batches.exists()
    crowd = wait_while(crowd, "waiting for the judge", 30)
    crowd_data = status(crowd)
    link = StudyLink.objects.get()
    assert crowd.state == "collecting" and crowd.study_link_id == link.pk, crowd_data
    assert link.batch_id == crowd.batches.get().pk and (link.quota, link.completion_code) == (10, "CAMP34")
    assert (crowd_data["study_link"]["url"], crowd_data["study_link"]["participants"]) == (f"/study/{link.token}/", 0)
    assert tight.problem.startswith("budget_labels: 35 labels pay for 35 items at overlap 1, fewer than the first "
                                    "batch of"), tight.problem
    assert Annotation.objects.filter(annotator=judge.annotator).count() == N_ITEMS
    data = status(campaign)
    assert data["judge_run"]["state"] == "done" and len(data["batches"]) == 1 and data["t_star"] > 0
    client = api_as(alice)
    campaign = wait_while(campaign, "collecting", 120, lambda: answer_everything(client, truth_by_pk))
    data = status(campaign)
    pool_mean = float(np.mean(list(truth.values())))
    assert data["reason"] == "target reached" and data["half_width"] <= 0.3
    assert data["ci_low"] <= pool_mean <= data["ci_high"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_judge_run_that_fails_fails_the_campaign_with_the_reason(start_worker, settings, monkeypatch):
    """Every reply is malformed: the run fails (not one answer), and the campaign with it, saying why; nothing was
    handed out to the people."""
    settings.CAMPAIGN_REVIEW_DEBOUNCE_SECONDS = 0.5
    monkeypatch.setenv(API_KEY_ENV, "sk-test-campaign-judge")
    make_annotator("alice", {"eng-Latn": "native"})
    task, _truth = sts_study("STS judge fails", seed=SEED, n_items=40, judge=False)
    with ChatServer(content_for=lambda seen: "I would rather not say") as server:
        make_judge("judge-mute", server.base_url, max_concurrency=8, max_answer_retries=0)
        campaign = start_campaign("judge-fails", task, "judge-mute", 0.3, annotators=["alice"])
        start_worker()
        campaign = wait_while(campaign, "waiting for the judge", 120)
    data = status(campaign)
    assert (data["state"], data["reason"]) == ("failed", "the judge's run failed")
    assert data["problem"].startswith("the judge's run failed: every request failed (40 item(s), none answered)")
    assert data["judge_run"]["state"] == "failed" and data["batches"] == [] and not Batch.objects.exists()


@pytest.mark.django_db
def test_a_judge_that_cannot_be_run_is_refused_and_a_cancelled_run_fails_the_campaign(alice, dave):
    """No worker: the run's message waits in the job layer's outbox (a test transaction never commits)."""
    task, _truth = sts_study("STS unjudged", n_items=300, judge=False)
    capped = make_judge("judge-capped", "http://127.0.0.1:9/v1", max_requests=5)
    capped.requests_sent = 5
    capped.save()
    make_judge("judge-ready", "http://127.0.0.1:9/v1")
    cases = [
        (dict(judge="judge-capped"), "judge: judge 'judge-capped' answered 0 of the 300 items of task 'STS unjudged'"),
        (dict(judge="judge-capped"), "it cannot be run: 'judge-capped' has spent its cap of 5 requests"),
        (dict(budget_labels=29), "budget_labels: 29 labels pay for 29 items at overlap 1, fewer than the smallest "
                                 "first batch of 30 items (30 labels)"),
        (dict(annotators=["nobody"]), "annotators: no annotator named 'nobody'"),
    ]
    for change, message in cases:
        args = {"judge": "judge-ready", **change}
        with pytest.raises(CampaignError) as refused:
            start_campaign("C", task, args.pop("judge"), 0.3, **args)
        assert message in str(refused.value), (change, str(refused.value))
    with pytest.raises(CommandError, match="it cannot be run: 'judge-capped' has spent its cap"):
        call_command("campaign", "start", "C", "--task", task.name, "--judge", "judge-capped",
                     "--target-half-width", "0.3")
    assert not Campaign.objects.exists() and not LLMRun.objects.exists()

    campaign = start_campaign("waits", task, "judge-ready", 0.3)
    run = LLMRun.objects.get()
    assert (campaign.state, campaign.judge_run_id, run.task_id, run.batch_id) == (
        "waiting for the judge", run.pk, task.pk, None)
    assert UnsentMessage.objects.filter(task="annotation.llm_run", args=[run.pk]).count() == 1
    asked = UnsentMessage.objects.filter(task="agreement.review_campaign")
    # its own review after the commit: a joined run that finished before the campaign committed is seen there
    assert list(asked.values_list("args", flat=True)) == [[campaign.pk]]
    again = start_campaign("waits too", task, "judge-ready", 0.3)  # joins the run in progress
    assert again.judge_run_id == run.pk and LLMRun.objects.count() == 1
    assert reviewing.review_campaign(campaign.pk) == f"waiting for the judge: run {run.pk} is queued"
    page = Client()
    page.force_login(dave)
    waiting = page.get("/campaigns/waits/").content.decode()
    assert f"The judge is labelling the task first (run {run.pk}: queued, 300 items)" in waiting
    assert 'hx-trigger="every 2s"' in waiting  # the page polls while it waits
    assert cancel_run(run)  # its `llm_run_finished` asks both campaigns' reviews at once
    assert sorted(asked.values_list("args", flat=True)) == [[campaign.pk]] * 2 + [[again.pk]] * 2
    assert {message.options["countdown"] for message in asked} == {0}
    assert reviewing.review_campaign(campaign.pk).startswith("failed: the judge's run failed")
    campaign.refresh_from_db()
    assert (campaign.state, campaign.reason, campaign.problem) == (
        "failed", "the judge's run failed", "the judge's run cancelled")
    failed = page.get("/campaigns/waits/").content.decode()
    assert 'id="campaign-problem" dir="auto">the judge&#x27;s run cancelled</p>' in failed
    assert 'hx-trigger="every 2s"' not in failed
    stopped = reviewing.stop_campaign(again)  # a waiting campaign can be stopped by hand
    assert (stopped.state, stopped.reason) == ("done", "stopped by hand")
    assert not Batch.objects.exists()
