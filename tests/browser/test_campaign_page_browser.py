"""Issue 34, "Done when" #1, in Chromium: an admin starts a campaign from the campaigns page on a seeded STS task
(300 pairs, ±0.3), a person answers through the loop API (from the test process: the loop pages have their own
browser tests, and 100-odd answers clicked would be slow), the review (the worker's job) runs, and the open page's
htmx poll shows the campaign stopped with its final statement, breaking no CSP rule."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from agreement.campaigns import reviewing
from agreement.campaigns.campaign_status import final_statement, status
from agreement.campaigns.models import Campaign
from hume.lib.celery_app import app
from tests.campaign_app import JUDGE, answer_everything, api_as, sts_study
from tests.conftest import make_annotator

pytestmark = pytest.mark.browser

WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
"""


@pytest.mark.django_db(transaction=True)
def test_an_admin_starts_a_campaign_from_the_page_and_sees_it_stop_itself(
        carol, logged_in_page: Callable[[str], Page], live_server) -> None:
    alice = make_annotator("alice", {"eng-Latn": "native"})
    task, truth = sts_study("STS browser", seed=3, n_items=300)
    page = logged_in_page("carol")
    page.context.add_init_script(WATCH)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Campaigns").click()
    form = page.locator("#start-campaign form")
    form.locator("input[name=name]").fill("sts-browser")
    form.locator("select[name=task]").select_option(task.name)
    form.locator("input[name=judge]").fill(JUDGE)
    form.locator("input[name=target_half_width]").fill("0.3")
    form.locator("input[name=annotators]").fill("alice")
    form.locator("input[name=seed]").fill("2")
    form.locator("button[type=submit]").click()
    expect(page).to_have_url(f"{live_server.url}/campaigns/sts-browser/")
    expect(page.locator("#campaign-state")).to_have_text("collecting")
    campaign = Campaign.objects.get(name="sts-browser")
    assert campaign.created_by.username == "carol" and campaign.batches.count() == 1

    truth_by_pk = {pk: truth[ext] for pk, ext in task.items.values_list("pk", "external_id")}
    client = api_as(alice)
    for _round in range(10):
        if Campaign.objects.get(pk=campaign.pk).state != "collecting":
            break
        assert answer_everything(client, truth_by_pk) > 0
        reviewing.review_campaign(campaign.pk)
    campaign.refresh_from_db()
    data = status(campaign)
    assert (data["state"], data["reason"]) == ("done", "target reached") and data["half_width"] <= 0.3

    # the page was not reloaded: its poll brings the final statement, the chart and the closed batches
    statement = page.locator("#final-statement")
    expect(statement).to_have_text(final_statement(data), timeout=15_000)
    expect(page.locator("#campaign-state")).to_have_text("done (target reached)")
    expect(page.locator("#campaign-sequence svg polyline.estimate")).to_be_visible()
    expect(page.locator("#stop-campaign")).to_have_count(0)
    assert page.evaluate("window.__cspViolations") == []
    assert console == []
    app.control.purge()  # the review jobs the answers asked for (no worker here)
