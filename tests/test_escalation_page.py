"""The researchers' escalation page (/escalation/, docs/escalation.md): a worker computes the plan with the
`escalate` command's code, the page shows the thresholds, coverage, guarantee and alternative-annotator test, and
an admin's button creates the human batch of exactly the escalated items."""
from __future__ import annotations

import json
import re
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from agreement.escalation.models import EscalationPlan
from agreement.escalation.plan_jobs import execute
from annotation.core.annotators import create_annotator
from annotation.models import Annotation, Batch, BatchItem
from tests.conftest import require_postgres
from tests.llm_helpers import make_judge, make_task

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_llm_endpoints")]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def study():
    """60 items three people labelled "negative" (41-60 by two saying "positive" on 41-45), 20 without a label;
    judge "small" is sure (0.9) and right on 1-40 and 61-70, unsure (0.3) elsewhere."""
    task, items, _ = make_task("classification", 80, name="page task")
    for n in range(3):
        person = create_annotator(f"page-person-{n}")
        Annotation.objects.bulk_create([Annotation(item=item, annotator=person, value="negative")
                                        for item in items[:60]])
    judge = make_judge("small", "http://127.0.0.1:9/v1").annotator
    Annotation.objects.bulk_create([
        Annotation(item=item, annotator=judge, source="llm", value="negative" if i < 40 or 60 <= i < 70 else "positive",
                   confidence=0.9 if i < 40 or 60 <= i < 70 else 0.3) for i, item in enumerate(items)])
    return task


def test_only_researchers_and_admins_reach_the_page(alice, dave, carol):
    assert logged_in(alice.user).get("/escalation/").status_code == 403
    assert logged_in(dave).get("/escalation/").status_code == 200
    assert logged_in(carol).get("/escalation/").status_code == 200


def test_bad_input_on_the_page_stores_nothing_and_says_why(dave):
    task = study()
    page = logged_in(dave).post("/escalation/", {"task": task.pk, "judges": "small,page-person-0", "alpha": "0.15",
                                                 "delta": "0.1"}, follow=True)
    assert "Nothing was started: &#x27;page-person-0&#x27;: a person, not an LLM annotator" in page.content.decode()
    page = logged_in(dave).post("/escalation/", {"task": task.pk, "judges": "small", "alpha": "1.5", "delta": "0.1"},
                                follow=True)
    assert "alpha must be strictly between 0 and 1" in page.content.decode()
    assert EscalationPlan.objects.count() == 0


@pytest.mark.parametrize(("field", "value", "message"), [
    ("calibration", str(10**30), f"calibration must be from 1 to 2147483647, got &#x27;{10**30}&#x27;"),
    ("calibration", "-5", "calibration must be from 1 to 2147483647, got &#x27;-5&#x27;"),
    ("calibration", "0", "calibration must be from 1 to 2147483647, got &#x27;0&#x27;"),
    ("calibration", "2.5", "calibration must be a whole number, got &#x27;2.5&#x27;"),
    ("calibration", "9" * 5001, f"calibration must be a whole number, got &#x27;{'9' * 40}…&#x27;"),
    ("epsilon", "nan", "epsilon must be a finite number, got &#x27;nan&#x27;"),
    ("epsilon", "inf", "epsilon must be a finite number, got &#x27;inf&#x27;"),
    ("epsilon", "-0.1", "epsilon must be from 0 to 1, got &#x27;-0.1&#x27;"),
    ("epsilon", "9" * 5001, f"epsilon must be a finite number, got &#x27;{'9' * 40}…&#x27;"),
    ("tolerance", "nan", "tolerance must be a finite number, got &#x27;nan&#x27;"),
    ("tolerance", "-1", "tolerance must be at least 0, got &#x27;-1&#x27;"),
    ("alpha", "nan", "alpha must be a finite number, got &#x27;nan&#x27;"),
    ("delta", "1e999", "delta must be a finite number, got &#x27;1e999&#x27;"),
])
def test_hostile_numbers_are_refused_naming_the_field_and_nothing_is_stored(dave, field, value, message):
    """Issue 35, items 3 and 8: calibration 10^30 was an OverflowError, -5 an IntegrityError (500s); epsilon nan
    a 500 too, tolerance nan was stored as empty without a word; a 5,001-digit value was quoted in full."""
    task = study()
    posted = {"task": task.pk, "judges": "small", "alpha": "0.15", "delta": "0.1", field: value}
    response = logged_in(dave).post("/escalation/", posted, follow=True)
    page = response.content.decode()
    assert response.status_code == 200
    assert f"Nothing was started: {message}" in page
    assert "9" * 41 not in page
    assert EscalationPlan.objects.count() == 0


def test_the_page_shows_the_commands_plan_and_an_admin_creates_the_batch_of_escalated_items(dave, carol):
    task = study()
    response = logged_in(dave).post("/escalation/", {"task": task.pk, "judges": "small", "alpha": "0.15",
                                                     "delta": "0.1", "epsilon": "0.2"})
    plan = EscalationPlan.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/escalation/{plan.pk}/"
    waiting = logged_in(dave).get(f"/escalation/{plan.pk}/").content.decode()
    assert "Being computed" in waiting and 'hx-trigger="every 1s"' in waiting
    assert execute(plan.pk) == "done" and execute(plan.pk) == "taken"
    out = StringIO()
    call_command("escalate", "page task", "--judges", "small", "--alpha", "0.15", "--delta", "0.1", stdout=out)
    cli = json.loads(out.getvalue())
    plan.refresh_from_db()
    assert {k: v for k, v in plan.result.items() if k != "escalated_item_ids"} == cli
    assert cli["rest"]["n_escalated"] == 10 and cli["escalated_items"] == [f"[m{n}]" for n in range(71, 81)]

    html = logged_in(dave).get(f"/escalation/{plan.pk}/").content.decode()
    assert "hx-trigger" not in html
    row = re.search(r"<tr><th scope=\"row\">small</th>(.*?)</tr>", html, re.S).group(1)
    cells = re.findall(r'<td class="num">(.*?)</td>', row)
    assert cells == [f"{cli['judges'][0]['threshold']:.4f}", "60", "40", "0.000",
                     f"{cli['judges'][0]['risk_bound']:.3f}", "10"]
    assert "Human labels saved: 10 items need no person." in html
    assert "at least <strong>0.85</strong>" in html and "<strong>10 escalated to people</strong>" in html
    assert "alternative-annotator test" in html and "An admin can create the human batch" in html
    assert "Create a human batch" not in html  # a researcher reads; only admins create batches
    assert logged_in(dave).post(f"/escalation/{plan.pk}/batch/", {"name": "x"}).status_code == 403

    logged_in(carol).post(f"/escalation/{plan.pk}/batch/", {"name": "people please", "overlap": "3"})
    batch = Batch.objects.get(task=task, name="people please")
    assert (batch.overlap, batch.language) == (3, task.language)
    assert list(BatchItem.objects.filter(batch=batch).order_by("position").values_list(
        "item__external_id", flat=True)) == cli["escalated_items"]
    again = logged_in(carol).post(f"/escalation/{plan.pk}/batch/", {"name": "twice"}, follow=True).content.decode()
    assert "No batch was created: this plan&#x27;s batch exists already" in again
    assert "Batch <strong dir=\"auto\">people please</strong> holds the 10 escalated items" in again
    assert Batch.objects.filter(task=task).count() == 1


def test_the_page_says_how_close_a_judge_that_keeps_nothing_came_as_the_command_does(dave):
    task = study()
    logged_in(dave).post("/escalation/", {"task": task.pk, "judges": "small", "alpha": "0.05", "delta": "0.1"})
    plan = EscalationPlan.objects.get()
    assert execute(plan.pk) == "done"
    out = StringIO()
    call_command("escalate", "page task", "--judges", "small", "--alpha", "0.05", "--delta", "0.1", stdout=out)
    closest = json.loads(out.getvalue())["judges"][0]["closest"]
    # 40 sure items, no error: bound 1 − 0.1^(1/40) = 0.0559 > 0.05; with every 40 of 60 kept and no error, N' items
    # pass once 1 − 0.1^(1/n') ≤ 0.05, n' = ⌈ln 0.1 / ln 0.95⌉ = 45, i.e. N' = 45 · 60/40 = 67.5 → 68.
    assert (closest["n_covered"], closest["n_errors"], closest["n_calibration_needed"]) == (40, 0, 68)
    html = logged_in(dave).get(f"/escalation/{plan.pk}/").content.decode()
    paragraph = re.search(r'<p class="judge-closest"[^>]*>(.*?)</p>', html, re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", "", paragraph).split())
    assert text == ("small keeps nothing. Closest: at threshold 0.9000 it would keep 40 calibration items with 0 "
                    "errors (disagreement 0.000, bound 0.056 against α = 0.05). About 68 calibration items for this "
                    "judge (it had 60), at that disagreement, would let it keep items.")


def test_a_plan_that_cannot_be_computed_fails_with_the_reason(dave):
    task = study()
    plan = EscalationPlan.objects.create(task=task, judges=["small"], alpha=0.15, delta=0.1, n_calibration=20)
    assert execute(plan.pk) == "failed"
    html = logged_in(dave).get(f"/escalation/{plan.pk}/").content.decode()
    assert "The plan failed: 20 human-labelled calibration items; calibration needs at least 30" in html


def test_a_real_worker_computes_the_plan_asked_for_on_the_page(start_worker, dave):
    require_postgres()
    task = study()
    start_worker()
    client = logged_in(dave)
    client.post("/escalation/", {"task": task.pk, "judges": "small", "alpha": "0.15", "delta": "0.1"})
    plan = EscalationPlan.objects.get()
    deadline = time.monotonic() + 120
    while plan.pending and time.monotonic() < deadline:
        time.sleep(0.5)
        plan.refresh_from_db()
    assert plan.status == "done", plan.error
    assert plan.result["rest"]["n_escalated"] == 10 and len(plan.result["escalated_item_ids"]) == 10
    assert "<strong>10 escalated to people</strong>" in client.get(f"/escalation/{plan.pk}/").content.decode()
