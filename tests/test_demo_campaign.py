"""The demo's campaign (agreement/campaigns/campaign_demo.py, `manage.py demo_campaign`, scripts/run): on first
start the report panel, the escalation page and the campaign page show the judge's saving, and the demo's people
finish the campaign through the loop. The figures are the seeded demo's (kinds/sts/demo/, written by
scripts/make_demo_campaign_data.py; docs/campaigns.md, "The demo")."""
import time
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from agreement.campaigns.campaign_batches import drawn_items
from agreement.campaigns.campaign_demo import JUDGE, NAME, TASK, people_answers
from agreement.campaigns.campaign_status import final_statement, status
from agreement.campaigns.models import Campaign
from agreement.campaigns.reviewing import review_campaign
from agreement.escalation.models import EscalationPlan
from agreement.ppi.models import PPIEstimate
from annotation.models import Annotation, Annotator
from tasks_app.models import Item, Task
from tests.campaign_app import api_as
from tests.test_demo import RUN, load_demo


def load_demo_campaign() -> tuple[str, float]:
    """The demo and its campaign, as scripts/run loads them; returns the command's output and its seconds."""
    load_demo()
    out = StringIO()
    started = time.perf_counter()
    with override_settings(DEBUG=True):
        call_command("demo_campaign", stdout=out)
    return out.getvalue(), time.perf_counter() - started


def page_as(username: str, url: str) -> str:
    client = Client()
    client.force_login(User.objects.get(username=username))
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


@pytest.mark.django_db
def test_on_first_start_the_report_panel_escalation_and_campaign_page_show_the_judges_saving() -> None:
    output, seconds = load_demo_campaign()
    assert seconds < 30, f"the demo campaign took {seconds:.1f} s to load"
    task = Task.objects.get(name=TASK)
    assert task.items.count() == 600
    assert Annotation.objects.filter(item__task=task, annotator__user__username=JUDGE).exclude(
        confidence=None).count() == 600  # the judge answered every pair, each with a confidence

    # the campaign: started by start_campaign, collecting, a few answers short of its target
    campaign = Campaign.objects.get(name=NAME)
    data = status(campaign)
    assert (data["state"], data["reason"], data["people"]) == ("collecting", "", ["alice", "bob"])
    assert (data["labels_used"], data["people_only_labels"], data["labels_planned"]) == (210, 355, 283)
    assert data["estimate"] == pytest.approx(2.721, abs=5e-4)
    assert (data["ci_low"], data["ci_high"]) == (pytest.approx(2.560, abs=1e-3), pytest.approx(2.890, abs=1e-3))
    assert data["half_width"] == pytest.approx(0.165, abs=5e-4) and data["half_width"] > 0.15
    assert data["lam"] > 0.4 and data["rho"] == pytest.approx(0.776, abs=5e-3)
    assert [(b["answered_items"], b["items"], b["open"]) for b in data["batches"]] == [(142, 142, True),
                                                                                       (68, 114, True)]
    assert "210 human labels used" in output and "people alone would need 355" in output
    # the people labelled a planned subset: only items the campaign drew, none elsewhere
    human = Annotation.objects.filter(item__task=task, annotator__agent=Annotator.Agent.HUMAN)
    assert human.count() == 210 and set(human.values_list("item_id", flat=True)) <= set(drawn_items(campaign))

    # the report's judge-augmented panel: labels worth more than their count, λ > 0
    estimate = PPIEstimate.objects.get(task=task, judge=JUDGE)
    row = next(r for r in estimate.document["estimates"] if r["scope"] == "task")
    assert (estimate.status, row["n"], round(row["n_effective"])) == ("done", 210, 345)
    assert row["lambda"] == pytest.approx(0.464, abs=5e-3)
    assert row["half_width"] < row["classical_half_width"]  # ±0.163 against ±0.211 from the people alone
    report = page_as("dave", f"/reports/task/{task.pk}/")
    assert "your 210 labels are worth 345" in report

    # escalation accepts the judge (it has confidences) and keeps items people need not label
    plan = EscalationPlan.objects.get(task=task)
    judge = plan.result["judges"][0]
    assert (plan.status, judge["name"], plan.result["human_labels_saved"]) == ("done", JUDGE, 203)
    assert judge["threshold"] == pytest.approx(0.650, abs=1e-3) and judge["risk_bound"] < 0.1
    assert "Human labels saved: 203 items need no person." in page_as("dave", f"/escalation/{plan.pk}/")

    # the campaign page: estimate, interval, labels used against people alone, the chart
    page = page_as("dave", f"/campaigns/{NAME}/")
    for needle in ("2.721", "2.56", "2.89", "210", "355", "<svg"):
        assert needle in page, needle


@pytest.mark.django_db
def test_the_demo_people_finish_the_campaign_through_the_loop_and_it_stops_at_its_target() -> None:
    load_demo_campaign()
    campaign = Campaign.objects.get(name=NAME)
    said = people_answers()
    external = dict(Item.objects.filter(task=campaign.task).values_list("pk", "external_id"))
    clients = {name: api_as(Annotator.objects.get(user__username=name)) for name in ("alice", "bob")}
    answered = 0
    while campaign.state == Campaign.State.COLLECTING and answered < 60:
        name = ("alice", "bob")[answered % 2]
        rows = [r for r in clients[name].get("/api/v1/my/batches/").json() if r["task"]["name"] == TASK]
        responses = [clients[name].get(row["next_url"]) for row in rows]  # batch 1 is answered: 204
        response = next(r for r in responses if r.status_code == 200)
        item = response.json()["item"]["id"]
        posted = clients[name].post(response.json()["answer_url"], {"value": said[external[item]]["value"]},
                                    format="json")
        assert posted.status_code == 201, posted.content
        answered += 1
        review_campaign(campaign.pk)  # as the worker's review does after each answer's debounce
        campaign.refresh_from_db()
    data = status(campaign)
    assert (data["state"], data["reason"], answered) == ("done", "target reached", 12)
    assert data["half_width"] <= 0.15 and data["labels_used"] == 222
    assert final_statement(data) == (f"{TASK}: {data['estimate']:.3g} ± {data['half_width']:.2g} (95%), 222 human "
                                     f"labels; people alone would need {data['people_only_labels']}")
    assert data["people_only_labels"] > 1.5 * data["labels_used"]
    assert not any(b["open"] for b in data["batches"])  # nothing more is handed out


@pytest.mark.django_db
def test_the_demo_campaign_loads_once_and_scripts_run_loads_it_after_the_demo() -> None:
    load_demo_campaign()
    counts = (Campaign.objects.count(), Annotation.objects.count(), PPIEstimate.objects.count(),
              EscalationPlan.objects.count())
    output, _seconds = load_demo_campaign()
    assert (Campaign.objects.count(), Annotation.objects.count(), PPIEstimate.objects.count(),
            EscalationPlan.objects.count()) == counts
    assert "state: collecting" in output
    commands = [line.split()[2] for line in RUN.read_text(encoding="utf-8").splitlines()
                if "manage.py" in line and not line.lstrip().startswith("#")]
    assert commands.index("demo_campaign") == commands.index("load_demo") + 1
