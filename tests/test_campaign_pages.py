"""The campaign pages (/campaigns/, agreement/campaigns/views.py, docs/campaigns.md "The pages"): the list, the
page's numbers, chart and final statement, the role rules, and the start form's refusals."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from agreement.campaigns import reviewing
from agreement.campaigns.campaign_chart import sequence_looks
from agreement.campaigns.campaign_status import final_statement, status
from agreement.campaigns.models import Campaign
from agreement.campaigns.starting import start_campaign
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.campaign_app import JUDGE, answer_everything, api_as, sts_study
from tests.conftest import PASSWORD


def logged_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def run_to_the_end(campaign: Campaign, alice, truth: dict[str, float]) -> Campaign:
    """alice answers every item handed out with the true value; the review (the worker's job) runs after each
    round, until the campaign stops itself."""
    truth_by_pk = {pk: truth[ext] for pk, ext in campaign.task.items.values_list("pk", "external_id")}
    client = api_as(alice)
    for _round in range(10):
        if Campaign.objects.get(pk=campaign.pk).state != "collecting":
            break
        answer_everything(client, truth_by_pk)
        reviewing.review_campaign(campaign.pk)
    return Campaign.objects.get(pk=campaign.pk)


@pytest.mark.django_db
def test_the_list_and_the_page_show_the_campaigns_numbers_chart_and_final_statement(alice, dave):
    task, truth = sts_study("STS pages", n_items=300)
    campaign = start_campaign("sts-page", task, JUDGE, 0.3, annotators=["alice"], seed=2,
                              price_per_label="0.5")
    client = logged_in("dave")
    listing = client.get("/campaigns/").content.decode()
    assert 'href="/campaigns/"' in listing  # the research navigation's entry
    assert "sts-page" in listing and "collecting" in listing and "0 / the pool" in listing
    page = client.get("/campaigns/sts-page/").content.decode()
    assert 'hx-trigger="every 2s"' in page and "no review yet" in page and "final-statement" not in page

    campaign = run_to_the_end(campaign, alice, truth)
    data = status(campaign)
    assert (data["state"], data["reason"]) == ("done", "target reached")
    page = client.get("/campaigns/sts-page/").content.decode()
    statement = final_statement(data)
    assert statement.startswith("STS pages: ") and f"{data['labels_used']} human labels" in statement
    assert f'<strong dir="auto">{statement}</strong>' in page
    assert "hx-trigger" not in page  # done: no more polling
    assert f"{data['estimate']:.3f} [{data['ci_low']:.3f}, {data['ci_high']:.3f}]" in page
    assert (f"{data['labels_used']} / {data['labels_planned']} / the pool") in page
    assert f"{data['people_only_labels']} labels for the same half-width" in page
    assert f"ρ {data['rho']:.3f}, bias (judge − people) {data['judge_mean_error']:.3f}" in page
    assert f"{0.5 * data['labels_used']:.2f}" in page  # cost at 0.5 a label
    for batch in data["batches"]:
        assert f"{batch['answered_items']} / {batch['items']}</td><td>closed" in page
    # the chart: one point per look up to the look it stopped at, the last the stored review's numbers
    looks = sequence_looks(campaign)
    assert looks[-1].labels == data["labels_used"]
    assert looks[-1].estimate == pytest.approx(data["estimate"]) and looks[-1].low == pytest.approx(data["ci_low"])
    svg = re.search(r"<svg .*?</svg>", page, re.S).group(0)
    assert len(re.search(r'class="estimate" points="([^"]*)"', svg).group(1).split()) == len(looks)
    assert 'class="interval"' in svg and "human labels used" in svg
    listing = client.get("/campaigns/").content.decode()
    assert "done (target reached)" in listing and f"{data['estimate']:.3f} ± {data['half_width']:.3f}" in listing
    # the htmx poll gets the numbers alone
    partial = client.get("/campaigns/sts-page/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<div id="campaign-numbers"') and "<html" not in partial


@pytest.mark.django_db
def test_role_rules_researchers_read_admins_start_and_stop(alice, carol, dave):
    task, _truth = sts_study("STS roles", n_items=300)
    start_campaign("sts-roles", task, JUDGE, 0.3, annotators=["alice"])
    annotator = logged_in("alice")
    for url in ("/campaigns/", "/campaigns/sts-roles/"):
        assert annotator.get(url).status_code == 403
    assert annotator.post("/campaigns/sts-roles/stop/").status_code == 403
    assert Client().get("/campaigns/").status_code == 302  # anonymous: the login page
    researcher = logged_in("dave")
    assert "Start a campaign" not in researcher.get("/campaigns/").content.decode()
    assert "stop-campaign" not in researcher.get("/campaigns/sts-roles/").content.decode()
    assert researcher.post("/campaigns/sts-roles/stop/").status_code == 403
    assert researcher.post("/campaigns/", {"name": "x", "task": task.name, "judge": JUDGE,
                                           "target_half_width": "0.3"}).status_code == 403
    assert Campaign.objects.get(name="sts-roles").state == "collecting" and not Campaign.objects.filter(name="x")

    admin = logged_in("carol")
    assert "stop-campaign" in admin.get("/campaigns/sts-roles/").content.decode()
    response = admin.post("/campaigns/sts-roles/stop/")
    assert response.status_code == 302 and response["Location"] == "/campaigns/sts-roles/"
    assert (Campaign.objects.get(name="sts-roles").reason) == "stopped by hand"
    response = admin.post("/campaigns/", {"name": "by-the-form", "task": task.name, "judge": JUDGE,
                                          "target_half_width": "0.3", "annotators": "alice", "overlap": "1"})
    assert response.status_code == 302 and response["Location"] == "/campaigns/by-the-form/"
    started = Campaign.objects.get(name="by-the-form")
    assert started.state == "collecting" and started.batches.count() == 1 and started.created_by.username == "carol"


@pytest.mark.django_db
def test_bad_start_input_is_refused_in_the_form_naming_the_field_and_writes_nothing(alice, carol):
    task, _truth = sts_study("STS bad", n_items=300)
    admin = logged_in("carol")
    good = {"name": "bad", "task": task.name, "judge": JUDGE, "target_half_width": "0.3", "annotators": "alice"}
    cases = [
        ({"target_half_width": ""}, "target_half_width: give the half-width to reach"),
        ({"target_half_width": "-1"}, "target_half_width: give the half-width to reach"),
        ({"target_half_width": "wide"}, "target_half_width: must be a number, got &#x27;wide&#x27;"),
        ({"budget_labels": "0"}, "budget_labels: must be a finite number of at least 1"),
        ({"budget_labels": "5"}, "budget_labels: 5 labels pay for 5 items"),
        ({"overlap": "two"}, "overlap: must be a whole number"),
        ({"judge": "nobody"}, "judge: no annotator named &#x27;nobody&#x27;"),
        ({"task": "no such task"}, "task: no task named &#x27;no such task&#x27;"),
        ({"annotators": "ghost"}, "annotators: no annotator named &#x27;ghost&#x27;"),
        ({"name": ""}, "name: a campaign needs a name"),
    ]
    for change, message in cases:
        response = admin.post("/campaigns/", {**good, **change})
        page = response.content.decode()
        assert response.status_code == 400, change
        assert message in page, (change, re.search(r'id="start-problem">([^<]*)', page))
        assert f'value="{(good | change)["judge"]}"' in page  # what was typed stays in the form
    assert not Campaign.objects.exists()
