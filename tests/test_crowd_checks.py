"""Quality checks of crowd participants (issue 26, item 2): attention checks, hidden gold, minimum time,
straight-lining, comprehension (practice) failures, Prolific's two-failure rule, the participants page and its
CSV lists, and exclusion with the report recomputed without the excluded annotator."""
from __future__ import annotations

import csv
import io
import re
import time

import pytest
from django.core.cache import caches
from django.test import Client

from agreement.models import Report
from annotation.core.annotators import create_annotator
from annotation.crowd import checks
from annotation.crowd.models import CheckResult, Participant, StudyLink
from annotation.crowd.participants import bonus_amount, participant_rows
from annotation.models import Annotation
from tasks_app.models import Item, ItemGold, Task
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, make_crowd_task, make_study, pid
from tests.report_builders import wait_for_report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


# --- the rules, alone -------------------------------------------------------------------------------------------

def test_numbers_match_within_the_tolerance_and_clusterings_as_partitions():
    assert checks.answer_matches("sts", 3.6, 3.2, tolerance=0.5)  # a tenth of the 0–5 scale
    assert not checks.answer_matches("sts", 3.8, 3.2, tolerance=0.5)
    assert checks.scale_tolerance((0.0, 5.0, None)) == pytest.approx(0.5)
    assert checks.answer_matches("likert", {"overall": 5, "coherence": 3}, {"overall": 4, "coherence": 3},
                                 tolerance=1.2)  # a tenth of a 1–7 axis would be 0.6; 1.2 takes 5 for 4
    assert checks.answer_matches("clustering", ["x", "x", "y"], ["b", "b", "a"])  # renamed clusters: the same
    assert not checks.answer_matches("clustering", ["x", "y", "y"], ["b", "b", "a"])
    assert checks.answer_matches("classification", "negative", "negative")
    assert not checks.answer_matches("classification", "positive", "negative")


def test_attention_checks_are_spread_evenly_over_the_quota():
    # quota 10, two checks: due after floor(10/3) = 3 and floor(20/3) = 6 work items
    due = [n for n in range(11) if checks.attention_due(n, 0, 2, 10)]
    assert due[0] == 3
    due_second = [n for n in range(11) if checks.attention_due(n, 1, 2, 10)]
    assert due_second[0] == 6
    assert not checks.attention_due(10, 2, 2, 10)


def test_hidden_gold_is_due_once_per_one_over_the_rate_work_items():
    assert [n for n in range(9) if checks.gold_due(n, 0, 0.25)] == [4, 5, 6, 7, 8]
    assert not checks.gold_due(7, 1, 0.25) and checks.gold_due(8, 1, 0.25)
    assert not checks.gold_due(100, 0, 0.0)


def test_a_straight_line_is_the_run_of_answers_equal_to_the_newest():
    assert checks.straightline_run(["a", "b", "b", "b"]) == 3
    assert checks.straightline_run([{"x": 1}, {"x": 1}]) == 2
    assert checks.straightline_run([]) == 0


def test_agreement_with_the_consensus_leaves_out_ties_and_lone_answers():
    own = {1: "a", 2: "b", 3: "a", 4: "a"}
    others = {1: ["a", "a", "b"], 2: ["a", "a"], 3: ["a", "b"]}  # item 3 ties, item 4 has no other answer
    assert checks.consensus_agreement(own, others, lambda x, y: x == y) == (0.5, 2)
    assert checks.consensus_agreement({1: "a"}, {}, lambda x, y: x == y) == (None, 0)


@pytest.mark.parametrize("stage, reason, fair_failures, expected", [
    ("completed", "", 0, "approve"),
    ("completed", "", 1, "approve"),  # one failed check is never enough (Prolific)
    ("completed", "", 2, "reject"),
    ("returned", "timed_out", 2, "reject"),
    ("returned", "comprehension", 2, "return"),  # a comprehension failure asks to return, never a rejection
    ("returned", "timed_out", 0, "return"),
    ("work", "", 0, "wait"),
])
def test_rejection_is_suggested_only_after_two_failed_fair_checks(stage, reason, fair_failures, expected):
    assert checks.suggestion(stage=stage, returned_reason=reason, fair_failures=fair_failures) == expected


@pytest.mark.parametrize("stage, reason, expected", [
    ("completed", "", "return"),  # a run completed before the rule, without the answers the code needs
    ("returned", "too_few_answers", "return"),  # skipped through (issue 35, item 2)
    ("returned", "full", "return"),
])
def test_approval_is_never_suggested_without_the_answers_the_code_needs(stage, reason, expected):
    assert checks.suggestion(stage=stage, returned_reason=reason, fair_failures=0, enough_work=False) == expected


# --- the checks in a study ------------------------------------------------------------------------------------

def test_a_failed_attention_check_is_recorded_and_two_suggest_rejection():
    link = make_study(make_crowd_task(n=6, attention=2, practice=0), consent="", quota=6, overlap=2)
    careless, careful = Person(link, 1), Person(link, 2)
    for person, label in ((careless, "positive"), (careful, "negative")):
        person.start()
        for _ in range(8):  # six work items and two attention checks, all answered with one label
            person.answer(label)
        assert person.participant.stage == Participant.Stage.COMPLETED
    rows = {row.participant.platform_id: row for row in participant_rows(link)}
    assert rows[pid(1)].failed["attention"] == 2 and rows[pid(1)].suggestion == "reject"
    assert rows[pid(2)].passed["attention"] == 2 and rows[pid(2)].suggestion == "approve"


def test_hidden_gold_checks_come_at_the_set_rate_from_gold_items_and_are_never_revealed():
    task = make_crowd_task("GoldMarked", n=10, attention=0, practice=0, gold_marker=True)
    link = make_study(task, consent="", quota=5, gold_rate=0.5)
    person = Person(link, 3)
    pages = [person.arrive().content.decode()]
    pages.append(person.post(action="instructions").content.decode())
    for _ in range(7):  # 5 work items, a gold check after the 2nd and after the 4th
        pages.append(person.answer("positive").content.decode())
    assert person.participant.stage == Participant.Stage.COMPLETED
    golds = list(CheckResult.objects.filter(role="gold").values_list("item_id", "passed"))
    assert len(golds) == 2 and all(not passed for _, passed in golds)  # "positive" is never "GOLD-positive"
    for check in CheckResult.objects.filter(role="gold"):  # never an item they had answered as work before
        assert not Annotation.objects.filter(annotator=person.participant.annotator, item_id=check.item_id,
                                             submitted_at__lt=check.created_at).exists()
    assert all("GOLD-" not in page for page in pages)
    assert all("Not quite" not in page and "Correct" not in page for page in pages)  # no feedback on gold


def test_the_item_counter_counts_checks_as_items_and_never_repeats_a_number():
    """Issue 35, item 7: an attention check showed "Item 2 of 5" as the work item before it had, which also told
    the participant it was a check. Quota 5, one attention check (after the 2nd work item: 5 // 2), hidden gold at
    0.5 after the 2nd and 4th work items (int(4 × 0.5) = 2 checks): 8 items in all, numbered 1 to 8."""
    link = make_study(make_crowd_task("Counted", n=10, attention=1, practice=0), consent="", quota=5, gold_rate=0.5)
    person = Person(link, 5)
    person.arrive()
    person.post(action="instructions")
    counters, roles = [], []
    while (page := person.page().content.decode()) and 'name="item"' in page:
        counters.append(re.search(r"<strong>Item (\d+) of (\d+)</strong>", page).groups())
        assert f"<title>Item {counters[-1][0]} of {counters[-1][1]}" in page
        roles.append(person.participant.check_role or "work")
        person.answer("negative")
    assert counters == [(str(n), "8") for n in range(1, 9)]
    assert roles == ["work", "work", "attention", "gold", "work", "work", "gold", "work"]
    assert person.participant.stage == Participant.Stage.COMPLETED


def test_a_hidden_gold_check_passes_on_the_gold_answer():
    link = make_study(make_crowd_task("GoldPlain", n=10, attention=0, practice=0), consent="", quota=2, gold_rate=1.0)
    person = Person(link, 4)
    person.start()
    person.answer("positive")
    item = person.item_on_screen()
    gold = ItemGold.objects.get(item_id=item).value
    person.post(action="answer", item=item, label=gold)
    assert list(CheckResult.objects.values_list("role", "item_id", "passed")) == [("gold", item, True)]


def test_answers_faster_than_the_minimum_time_are_flagged():
    link = make_study(make_crowd_task(n=4, attention=0, practice=0), consent="", quota=3, min_seconds=3600)
    person = Person(link, 5)
    person.start()
    for _ in range(3):
        person.answer("positive")
    speed = CheckResult.objects.filter(role="speed")
    assert speed.count() == 3 and not any(speed.values_list("passed", flat=True))
    assert all(ms < 3_600_000 for ms in speed.values_list("time_spent_ms", flat=True))


def test_straight_lining_is_flagged_once_per_run_of_the_set_length():
    link = make_study(make_crowd_task(n=8, attention=0, practice=0), consent="", quota=7, straightline_run=3)
    person = Person(link, 6)
    person.start()
    for label in ["positive"] * 6 + ["negative"]:
        person.answer(label)
    assert CheckResult.objects.filter(role="straightline", passed=False).count() == 2  # after the 3rd and the 6th
    row = participant_rows(link)[0]
    assert row.failed["straightline"] == 2 and row.suggestion == "approve"  # a signal, not grounds to reject


def test_failing_the_practice_items_asks_the_participant_to_return():
    link = make_study(make_crowd_task(n=4, attention=0, practice=2), consent="", practice_failures_allowed=1)
    person = Person(link, 7)
    person.start()
    first = person.answer("negative").content.decode()
    assert "Not quite" in first and 'id="continue"' in first
    last = person.answer("negative").content.decode()
    assert 'id="continue"' not in last
    page = person.page().content.decode()
    assert "Please return this study" in page and "will not count against you" in page
    assert person.participant.returned_reason == "comprehension"
    assert participant_rows(link)[0].suggestion == "return"
    assert not Annotation.objects.exists()


def test_practice_passed_leads_to_the_work():
    link = make_study(make_crowd_task(n=4, attention=0, practice=1), consent="", quota=1)
    person = Person(link, 8)
    person.start()
    assert "Correct" in person.answer("positive").content.decode()
    assert "Item 1 of 1" in person.page().content.decode()


# --- the participants page, exports and exclusion --------------------------------------------------------------

def admin_client(carol) -> Client:
    client = Client()
    assert client.login(username="carol", password=PASSWORD)
    return client


def finished_study() -> StudyLink:
    """Four participants on the same three items (k = 4): 1 answers everything "positive", 2–4 "negative"."""
    link = make_study(make_crowd_task(n=6, attention=2, practice=0), consent="", quota=3, overlap=4)
    for n, label in ((1, "positive"), (2, "negative"), (3, "negative"), (4, "negative")):
        person = Person(link, n)
        person.start()
        for _ in range(5):
            person.answer(label)
    return link


def test_the_participants_page_shows_checks_time_agreement_and_platform_ids_to_admins_only(carol, dave):
    link = finished_study()
    body = admin_client(carol).get(f"/manage/studies/{link.pk}/").content.decode()
    assert pid(1) in body and "2 passed, 0 failed" in body and "0 passed, 2 failed" in body
    assert '<td class="suggestion">reject</td>' in body and '<td class="suggestion">approve</td>' in body
    researcher = Client()
    assert researcher.login(username="dave", password=PASSWORD)
    page = researcher.get(f"/manage/studies/{link.pk}/")
    assert page.status_code == 200 and pid(1) not in page.content.decode()
    assert researcher.get(f"/manage/studies/{link.pk}/approve.csv").status_code == 403
    rows = {row.participant.platform_id: row for row in participant_rows(link)}
    # 2's others on each item: positive, negative, negative → consensus negative, as 2 answered; 1's: all negative
    assert (rows[pid(2)].agreement, rows[pid(2)].n_compared) == (1.0, 3)
    assert (rows[pid(1)].agreement, rows[pid(1)].n_compared) == (0.0, 3)
    assert "1.00 (3 items)" in body and "0.00 (3 items)" in body


def test_the_csv_lists_name_participants_to_approve_reject_and_bonus(carol):
    link = finished_study()
    client = admin_client(carol)
    approve = client.get(f"/manage/studies/{link.pk}/approve.csv").content.decode().splitlines()
    reject = client.get(f"/manage/studies/{link.pk}/reject.csv").content.decode().splitlines()
    bonus = client.get(f"/manage/studies/{link.pk}/bonus.csv?amount=0.5").content.decode().splitlines()
    assert approve == ["participant_id", pid(2), pid(3), pid(4)]
    assert reject == ["participant_id,failed_attention_checks", f"{pid(1)},2"]
    assert bonus == ["participant_id,amount", f"{pid(2)},0.50", f"{pid(3)},0.50", f"{pid(4)},0.50"]
    refused = client.get(f"/manage/studies/{link.pk}/bonus.csv?amount=%3D1%2B1")
    assert refused.status_code == 400 and "amount: must be a number" in refused.content.decode()
    with pytest.raises(ValueError, match="at most two decimals"):
        bonus_amount("0.005")


def test_one_click_excludes_a_participant_with_a_reason(carol):
    link = finished_study()
    careless = Participant.objects.get(platform_id=pid(1))
    client = admin_client(carol)
    client.post(f"/manage/studies/{link.pk}/participants/{careless.pk}/exclude/", {"reason": "failed checks"})
    careless.annotator.refresh_from_db()
    assert careless.annotator.excluded_reason == "failed checks" and careless.annotator.excluded_at is not None
    body = client.get(f"/manage/studies/{link.pk}/").content.decode()
    assert "excluded: <span dir=\"auto\">failed checks</span>" in body
    approve = client.get(f"/manage/studies/{link.pk}/approve.csv").content.decode().splitlines()
    assert pid(1) not in approve


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_exclusion_recomputes_the_report_without_the_annotator_and_lists_it(start_worker, settings):
    settings.REPORT_DEBOUNCE_SECONDS = 1
    start_worker()
    task = Task.objects.create(name="ExcludeMe", kind="classification", language="eng-Latn", labels=["a", "b"])
    items = [Item.objects.create(task=task, uid=f"ex-{i}", external_id=f"i{i}", position=i, payload={"text": str(i)})
             for i in range(4)]
    for item, gold in zip(items, "abab", strict=True):
        ItemGold.objects.create(item=item, value=gold)
    people = {name: create_annotator(name) for name in ("u1", "u2", "spammer")}
    for name, answers in (("u1", "abab"), ("u2", "abab"), ("spammer", "bbbb")):
        for item, value in zip(items, answers, strict=True):
            Annotation.objects.create(item=item, annotator=people[name], value=value)
    before = wait_for_report(task).result
    assert before["n_annotators"] == 3 and before["excluded_annotators"] == []
    call_excluded = time.monotonic()
    from django.core.management import call_command
    call_command("exclude_annotator", "spammer", "--reason", "answered b to everything")
    deadline = call_excluded + 90
    while True:
        report = Report.objects.get(task=task)
        if report.status == Report.Status.DONE and report.result.get("excluded_annotators"):
            break
        assert time.monotonic() < deadline, "the report was not recomputed after the exclusion"
        time.sleep(0.2)
    after = report.result
    assert after["n_annotators"] == 2 and after["n_answers"] == 8
    assert [(e["name"], e["reason"]) for e in after["excluded_annotators"]] == [("spammer", "answered b to everything")]
    assert sorted(a["name"] for a in before["annotators"]) == ["spammer", "u1", "u2"]
    assert sorted(a["name"] for a in after["annotators"]) == ["u1", "u2"]
    assert Annotation.objects.filter(annotator=people["spammer"]).count() == 4  # the answers stay stored


def test_the_participants_csv_gives_each_participants_checks_and_answer_spread(carol):
    """The answer spread (measures/annotator_models.py, `answer_spread`) per participant in the participants CSV:
    one who answers "positive" to all ten items straight-lines (share 1, 0 bits, flagged at >= 0.9 of >= 10
    answers); one who alternates has share 0.5 ("negative", the smaller label as text, on a tie) and 1 bit."""
    link = make_study(make_crowd_task(n=10, attention=0, practice=0), consent="", quota=10, overlap=2)
    for n, labels in ((1, ["positive"] * 10), (2, ["positive", "negative"] * 5)):
        person = Person(link, n)
        person.start()
        for label in labels:
            person.answer(label)
        assert person.participant.stage == Participant.Stage.COMPLETED
    text = admin_client(carol).get(f"/manage/studies/{link.pk}/participants.csv").content.decode()
    table = {row["participant_id"]: row for row in csv.DictReader(io.StringIO(text))}
    spread = ("n_work", "n_answers", "modal_label", "modal_share", "entropy_bits", "straightlining", "suggestion")
    assert [table[pid(1)][c] for c in spread] == ["10", "10", "positive", "1.0", "0.0", "True", "approve"]
    assert [table[pid(2)][c] for c in spread] == ["10", "10", "negative", "0.5", "1.0", "False", "approve"]
    assert table[pid(2)]["agreement"] == "0.5" and table[pid(2)]["n_compared"] == "10"  # 5 of 10 match 1's answer
    assert text.splitlines()[0].startswith("participant_id,annotator,stage,returned_reason,n_work,n_skipped")
    assert Client().get(f"/manage/studies/{link.pk}/participants.csv").status_code in (302, 403)  # admins only
