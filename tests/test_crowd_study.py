"""A crowd study from the participant's side (issue 26, item 1): arrival, consent, instructions, practice,
work, completion; resume, one tab at a time, the time limit, and bad input that gets a clear page."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.utils import timezone

from annotation.crowd import studies
from annotation.crowd.models import CheckResult, Participant, StudyLink
from annotation.models import Annotation, Hold
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.crowd_helpers import Person, arrival_url, make_crowd_task, make_study, pid

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def test_a_prolific_arrival_goes_through_consent_practice_and_work_to_the_completion_code():
    link = make_study()
    person = Person(link, 1)
    consent = person.arrive()
    body = consent.content.decode()
    assert consent.status_code == 200 and 'id="study-consent"' in body
    assert "<strong>No personal data</strong>" in body  # the consent's Markdown, rendered
    instructions = person.post(action="consent").content.decode()
    assert "<strong>positive</strong>" in instructions and "1 practice item" in instructions
    practice = person.page().content.decode()
    person.post(action="instructions")
    practice = person.page().content.decode()
    assert "Practice 0: a lovely day." in practice and "Practice</strong> 1 of 1" in practice
    feedback = person.answer("negative").content.decode()
    assert "Not quite" in feedback and '<strong dir="auto" id="expected">positive</strong>' in feedback
    assert "A lovely day is positive." in feedback
    seen = []
    for _ in range(5):  # four work items and, after the second, the attention check
        page = person.page().content.decode()
        seen.append("Attention" if "Attention 0" in page else "work")
        person.answer("negative")
    assert seen == ["work", "work", "Attention", "work", "work"]
    done = person.page().content.decode()
    assert 'id="completion-code">C0DE42<' in done
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0DE42"' in done
    participant = person.participant
    assert participant.stage == Participant.Stage.COMPLETED and participant.platform_study_id == "5" * 24
    assert Annotation.objects.filter(annotator=participant.annotator, batch=link.batch).count() == 4
    assert list(participant.checks.values_list("role", "passed")) == [("practice", False), ("attention", True)]
    # the annotator is the study's alone: one batch, the batch's language, no password to log in with
    assert list(participant.annotator.batches.all()) == [link.batch]
    assert participant.annotator.language_codes() == {"eng-Latn"}
    assert not participant.annotator.user.has_usable_password()
    assert pid(1) not in participant.annotator.name  # a pseudonym: the platform id stays in the study's table


def test_the_same_participant_id_resumes_where_it_left_off_in_the_browser_that_started():
    link = make_study(consent="")
    first = Person(link, 2)
    first.start()
    first.answer("positive")  # the practice item
    first.answer("positive")
    first.answer("negative")
    on_screen = first.item_on_screen()
    Participant.objects.filter(pk=first.participant.pk).update(tab_seen_at=timezone.now() - timedelta(minutes=5))
    other_browser = Person(link, 2)  # the same PROLIFIC_PID without the run's secret: refused, nothing changes
    refused = other_browser.arrive()
    assert refused.status_code == 409 and "already started" in refused.content.decode()
    again = Person(link, 2)  # the same browser, the tab closed, the link opened again from the platform
    again.client.cookies = first.client.cookies
    page = again.arrive().content.decode()
    assert "Item 3 of 5" in page and f'name="item" value="{on_screen}"' in page
    assert Participant.objects.filter(link=link).count() == 1
    again.answer("positive")
    again.answer("positive")  # on screen was the attention check (due after two work items), then work
    assert Annotation.objects.filter(annotator=again.participant.annotator).count() == 3
    assert list(again.participant.checks.values_list("role", flat=True)) == ["practice", "attention"]


def test_a_second_tab_gets_a_clear_page_and_changes_nothing():
    link = make_study(consent="")
    person = Person(link, 3)
    person.start()
    person.answer("positive")
    item = person.item_on_screen()
    second = person.client.get(f"/study/{link.token}/run/")  # the same browser, a new tab
    assert second.status_code == 409 and "open in another tab" in second.content.decode()
    stale = person.client.post(f"/study/{link.token}/run/", {"tab": "not-this-one", "action": "answer",
                                                             "item": item, "label": "positive"})
    assert stale.status_code == 409 and "Nothing from this tab was stored" in stale.content.decode()
    assert Annotation.objects.filter(annotator=person.participant.annotator).count() == 0
    taken = person.client.post(f"/study/{link.token}/take-over/", follow=True)  # "Continue here"
    assert f'name="item" value="{item}"' in taken.content.decode()  # the same item: nothing lost
    old_tab = person.post(action="answer", item=item, label="positive")
    assert old_tab.status_code == 409 and Annotation.objects.count() == 0


def test_a_timed_out_participant_is_returned_and_their_held_item_goes_to_the_next_participant():
    link = make_study(make_crowd_task(n=2, attention=0, practice=0), consent="", quota=2)
    slow = Person(link, 4)
    slow.start()
    held = slow.item_on_screen()
    assert Hold.objects.filter(annotator=slow.participant.annotator).count() == 1
    Participant.objects.filter(pk=slow.participant.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    fast = Person(link, 5)
    fast.start()  # arriving sweeps the overdue participants
    assert slow.participant.stage == Participant.Stage.RETURNED and slow.participant.returned_reason == "timed_out"
    assert not Hold.objects.filter(annotator=slow.participant.annotator).exists()
    fast_items = {fast.item_on_screen()}
    fast.answer("positive")
    fast_items.add(fast.item_on_screen())
    fast.answer("positive")
    assert held in fast_items  # the timed-out participant's item was handed on
    late = slow.post(action="answer", item=held, label="negative").content.decode()
    assert "Your time for this study ran out" in late
    assert Annotation.objects.filter(annotator=slow.participant.annotator).count() == 0
    for item in fast_items:  # k = 1 held exactly
        assert Annotation.objects.filter(item_id=item, skipped=False).count() == 1


def test_leaving_returns_the_participant_and_frees_their_item():
    link = make_study(consent="")
    person = Person(link, 6)
    person.start()
    person.answer("positive")
    person.item_on_screen()
    page = person.post(action="leave").content.decode()
    assert "You left the study" in page
    assert person.participant.returned_reason == "left" and not Hold.objects.exists()


def test_declining_consent_ends_the_study_with_no_answers():
    link = make_study()
    person = Person(link, 7)
    person.arrive()
    page = person.post(action="decline").content.decode()
    assert "You did not agree to take part" in page
    assert person.participant.returned_reason == "declined" and not Annotation.objects.exists()


def test_a_closed_study_gets_a_clear_page_and_admits_no_one():
    link = make_study()
    link.is_open = False
    link.save(update_fields=["is_open"])
    response = Person(link, 8).arrive()
    assert response.status_code == 410 and "This study is closed" in response.content.decode()
    assert not Participant.objects.exists()
    link.is_open = True
    link.save(update_fields=["is_open"])
    link.batch.is_open = False
    link.batch.save(update_fields=["is_open"])
    assert Person(link, 8).arrive().status_code == 410


@pytest.mark.parametrize("query, field", [
    ("PROLIFIC_PID=abc", "PROLIFIC_PID"),
    ("PROLIFIC_PID=<script>alert(1)</script>", "PROLIFIC_PID"),
    (f"PROLIFIC_PID={'a' * 24}&STUDY_ID=1%3D1", "STUDY_ID"),
    ("", "PROLIFIC_PID"),
])
def test_a_malformed_participant_id_gets_a_clear_page_naming_the_parameter(client, query, field):
    link = make_study()
    response = client.get(f"/study/{link.token}/?{query}")
    body = response.content.decode()
    assert response.status_code == 400 and f"Parameter {field}" in body
    assert "<script>alert" not in body and not Participant.objects.exists()


def test_a_generic_platform_link_takes_a_participant_parameter(client):
    link = make_study(platform=StudyLink.Platform.GENERIC, consent="")
    assert client.get(f"/study/{link.token}/?participant=has%20space").status_code == 400
    page = client.get(f"/study/{link.token}/?participant=worker-17", follow=True).content.decode()
    assert 'id="study-instructions"' in page
    assert Participant.objects.get().platform_id == "worker-17"


def test_an_unknown_study_token_is_a_404_page(client):
    make_study()
    response = client.get(f"/study/{'x' * 32}/?PROLIFIC_PID={pid(1)}")
    assert response.status_code == 404 and "This study link does not exist" in response.content.decode()


def test_a_quota_above_the_batch_is_refused_naming_the_field():
    task = make_crowd_task(n=3)
    with pytest.raises(studies.StudyProblem) as refused:
        make_study(task, quota=4)
    assert refused.value.field == "quota" and "4 is more than the 3 items" in refused.value.message
    assert not StudyLink.objects.exists()


def test_the_participant_pages_run_no_inline_script_and_are_not_cached():
    link = make_study()
    person = Person(link, 9)
    response = person.arrive()
    assert "script-src 'self'" in response["Content-Security-Policy"] and response["Cache-Control"] == "no-store"
    assert "<script>" not in response.content.decode()


def test_an_arabic_study_is_shown_right_to_left():
    link = make_study(make_crowd_task("CrowdArabic", language="ara-Arab"), consent="")
    person = Person(link, 10)
    page = person.arrive().content.decode()
    assert '<html lang="ara" dir="rtl">' in page
    assert person.participant.annotator.language_codes() == {"ara-Arab"}


def test_a_check_answer_replayed_is_recorded_once():
    link = make_study(make_crowd_task(n=4, attention=1, practice=0), consent="", quota=2)
    person = Person(link, 11)
    person.start()
    person.answer("positive")
    item = person.item_on_screen()
    assert CheckResult.objects.count() == 0 and "Attention" in person.page().content.decode()
    person.post(action="answer", item=item, label="negative")
    person.post(action="answer", item=item, label="positive")  # a double click or a replay
    assert list(CheckResult.objects.values_list("role", "passed")) == [("attention", True)]
    assert arrival_url(link, 11).startswith(f"/study/{link.token}/")


def test_a_study_closed_while_a_participant_works_gets_a_clear_page_and_keeps_their_answers():
    link = make_study(make_crowd_task(practice=0), consent="")
    person = Person(link, 12)
    person.start()
    person.answer("positive")
    item = person.item_on_screen()
    link.batch.is_open = False
    link.batch.save(update_fields=["is_open"])
    closed = person.client.post(f"/study/{link.token}/run/", {"tab": person.tab, "action": "answer", "item": item,
                                                              "label": "negative"})
    assert closed.status_code == 410 and "was closed while you were taking part" in closed.content.decode()
    assert list(Annotation.objects.filter(annotator=person.participant.annotator).values_list("value", flat=True)) == [
        "positive"]


def test_the_batch_page_button_makes_a_link_and_refuses_a_quota_above_the_batch(carol):
    from django.test import Client

    from tests.batch_helpers import make_batch
    from tests.conftest import PASSWORD

    batch = make_batch(make_crowd_task(n=3))
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    assert f"/manage/studies/new/{batch.pk}/" in admin.get(f"/manage/batches/{batch.pk}/").content.decode()
    form = {"quota": 5, "minutes": 10, "completion_code": "XYZ", "platform": "prolific", "gold_rate": 0,
            "min_seconds": 0, "straightline_run": 0, "practice_failures_allowed": 1}
    refused = admin.post(f"/manage/studies/new/{batch.pk}/", form)
    assert refused.status_code == 200 and "5 is more than the 3 items" in refused.content.decode()
    assert not StudyLink.objects.exists()
    made = admin.post(f"/manage/studies/new/{batch.pk}/", {**form, "quota": 2}, follow=True)
    link = StudyLink.objects.get()
    body = made.content.decode()
    assert f"/study/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in body and link.quota == 2
    assert link.min_answers == 0  # not given: the quota earns the code


def test_the_new_link_form_stores_the_fewest_answers_that_earn_the_code(carol):
    """The form's `min_answers` is the command's --min-answers (docs/crowd.md, "No code without the work")."""
    from django.test import Client

    from tests.batch_helpers import make_batch

    batch = make_batch(make_crowd_task(n=3))
    admin = Client()
    admin.force_login(carol)
    form = {"quota": 3, "minutes": 10, "completion_code": "XYZ", "platform": "prolific", "gold_rate": 0,
            "min_seconds": 0, "straightline_run": 0, "practice_failures_allowed": 1, "min_answers": 2}
    assert 'name="min_answers"' in admin.get(f"/manage/studies/new/{batch.pk}/").content.decode()
    admin.post(f"/manage/studies/new/{batch.pk}/", form)
    assert StudyLink.objects.get().min_answers == 2


def test_the_consent_markdown_is_rendered_safely():
    link = make_study(consent="Read **this**. <script>alert(1)</script> [x](javascript:alert(2))")
    body = Person(link, 13).arrive().content.decode()
    assert "<strong>this</strong>" in body
    assert "<script>alert" not in body and "javascript:" not in body


@pytest.mark.parametrize(("field", "value", "error"), [
    ("min_seconds", str(10**30), "Ensure this value is less than or equal to 86400."),
    ("min_seconds", str(2**63), "Ensure this value is less than or equal to 86400."),
    ("straightline_run", str(10**30), "Ensure this value is less than or equal to 2147483647."),
    ("straightline_run", str(2**63), "Ensure this value is less than or equal to 2147483647."),
    ("straightline_run", "3", "must be from 0 to 2, got 3"),
    ("practice_failures_allowed", str(10**30), "Ensure this value is less than or equal to 2147483647."),
    ("practice_failures_allowed", str(2**63), "Ensure this value is less than or equal to 2147483647."),
    ("quota", str(2**63), "Ensure this value is less than or equal to 2147483647."),
    ("min_seconds", "9" * 5001, "Enter a whole number."),
    ("gold_rate", "nan", "Enter a number."),
    ("min_answers", "3", "must be from 0 (the quota) to the quota 2, got 3"),
    ("min_answers", str(10**30), "Ensure this value is less than or equal to 2147483647."),
    ("gold_rate", "0.4", "0.4 × a quota of 2 shows no hidden gold check at all (0.4 × the 1 place between work "
                         "items rounds down to 0); set it to at least 1, or 0 for none"),
])
def test_the_new_link_form_refuses_hostile_numbers_on_their_field_and_stores_nothing(carol, field, value, error):
    """Issue 35, items 3 and 7: 10^30 or 2^63 in min_seconds, straightline_run or practice_failures_allowed was a
    500 (OverflowError); a gold rate that shows no gold check at all was taken without a word."""
    from django.test import Client

    from tests.batch_helpers import make_batch

    batch = make_batch(make_crowd_task(n=3))
    admin = Client()
    admin.force_login(carol)
    form = {"quota": 2, "minutes": 10, "completion_code": "XYZ", "platform": "prolific", "gold_rate": 0,
            "min_seconds": 0, "straightline_run": 0, "practice_failures_allowed": 1, field: value}
    refused = admin.post(f"/manage/studies/new/{batch.pk}/", form)
    assert refused.status_code == 200
    assert refused.context["form"].errors == {field: [error]}
    assert "9" * 41 not in refused.content.decode()
    assert not StudyLink.objects.exists()


def test_the_new_link_form_shows_the_tasks_check_items_and_the_largest_quota(carol):
    from django.test import Client

    from tests.batch_helpers import make_batch

    batch = make_batch(make_crowd_task(n=5, attention=2, practice=3))
    admin = Client()
    admin.force_login(carol)
    page = admin.get(f"/manage/studies/new/{batch.pk}/").content.decode()
    facts = re.sub(r"\s+", " ", re.search(r'<dl class="facts" id="study-link-facts">(.*?)</dl>', page, re.S).group(1))
    assert "<dt>Largest quota</dt><dd>5 (the batch's items)</dd>" in facts
    assert "<dt>Practice items</dt><dd>3</dd>" in facts
    assert "<dt>Attention checks</dt><dd>2 (each participant" in facts
    assert "<dt>Items with gold</dt><dd>5 (hidden gold checks" in facts
