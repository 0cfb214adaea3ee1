"""A participant skips, flags and goes back to revise (docs/crowd.md, "Skip, flag and revise"), as the ordinary
loop allows: a skipped item goes to others and never back to them, a flag keeps its reason for the researcher,
a revision keeps every earlier answer, and the quota counts answered items."""
from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.test import Client
from django.utils import timezone

from annotation.crowd.models import CheckResult, Participant
from annotation.crowd.participants import participant_rows
from annotation.crowd.studies import expire_overdue
from annotation.models import Annotation, AnnotationRevision
from tasks_app.models import Item
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, make_crowd_task, make_study, pid

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def work_study(n: int = 6, quota: int = 2, overlap: int = 1, attention: int = 0):
    return make_study(make_crowd_task(n=n, attention=attention, practice=0), consent="", quota=quota,
                      overlap=overlap)


def started(link, n: int) -> Person:
    person = Person(link, n)
    person.start()
    return person


def test_a_skipped_item_goes_to_the_next_participant_never_back_and_the_quota_counts_answers():
    link = work_study(n=3, quota=2)
    person = started(link, 1)
    skipped = person.item_on_screen()
    page = person.post(side="skip", action="answer", item=skipped, skip_reason="unsure").content.decode()
    assert "Item 1 of 2" in page  # a skip does not count toward the quota
    answered = []
    while (item := person.item_on_screen()) is not None:
        assert item != skipped
        answered.append(item)
        person.post(action="answer", item=item, label="positive")
    assert len(answered) == 2 and person.participant.stage == Participant.Stage.COMPLETED
    skip = Annotation.objects.get(annotator=person.participant.annotator, item_id=skipped)
    assert skip.skipped and skip.value is None and skip.skip_reason == "I can't judge this confidently"
    other = started(link, 2)
    assert other.item_on_screen() == skipped  # k = 1: the skip freed its slot for someone else


def test_a_skip_without_a_reason_is_refused_and_stores_nothing():
    link = work_study()
    person = started(link, 1)
    item = person.item_on_screen()
    response = person.post(side="skip", action="answer", item=item, skip_reason="")
    assert response.status_code == 422 and "Choose why you skip." in response.content.decode()
    assert not Annotation.objects.filter(item_id=item).exists() and person.item_on_screen() == item


def test_a_flag_without_an_answer_is_a_flagged_skip_and_the_researcher_sees_its_reason(carol):
    link = work_study(quota=2)
    person = started(link, 1)
    first = person.item_on_screen()
    person.post(side="flag", action="answer", item=first, flag_tags="broken text", flag_comment="cut off mid-word")
    second = person.item_on_screen()
    assert second != first
    person.post(action="answer", item=second, label="negative", flag_tags="ambiguous")  # a flag sent with an answer
    flagged_skip = Annotation.objects.get(item_id=first)
    assert (flagged_skip.skipped, flagged_skip.flagged, flagged_skip.flag_comment) == (
        True, True, "broken text; cut off mid-word")
    answer = Annotation.objects.get(item_id=second)
    assert (answer.value, answer.flagged, answer.flag_comment) == ("negative", True, "ambiguous")
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    body = admin.get(f"/manage/studies/{link.pk}/").content.decode()
    flags = body[body.index('id="flags"'):]
    assert "flagged, skipped</td><td dir=\"auto\">broken text; cut off mid-word" in flags
    assert "flagged, answered</td><td dir=\"auto\">ambiguous" in flags
    # issue 35, item 7: each item by its own id (the dataset's), never the 64-hex digest uid
    first_item, second_item = Item.objects.get(pk=first), Item.objects.get(pk=second)
    assert f'<td dir="auto">{first_item.external_id}</td><td>flagged, skipped' in flags
    assert f'<td dir="auto">{second_item.external_id}</td><td>flagged, answered' in flags
    assert first_item.uid not in flags and second_item.uid not in flags
    assert '<td class="skipped">1</td><td class="flagged">2</td>' in body


def test_a_skipped_or_flagged_check_item_counts_as_not_passed_with_the_reason_kept():
    link = work_study(n=6, quota=3, attention=1)  # the attention check comes after ⌊2·3/2⌋ = 1 work item
    person = started(link, 1)
    person.answer("positive")
    page = person.page().content.decode()
    assert "Attention 0" in page and 'name="side" value="skip"' in page  # a check looks like any item
    check = person.item_on_screen()
    person.post(side="flag", action="answer", item=check, flag_comment="asks for a set answer")
    result = CheckResult.objects.get(participant=person.participant, item_id=check)
    assert (result.role, result.passed, result.value, result.note) == (
        "attention", False, None, "flagged: asks for a set answer")
    assert "Attention 0" not in person.page().content.decode()  # it does not come back
    assert not Annotation.objects.filter(item_id=check).exists()  # a check never enters the batch


def test_going_back_revises_an_earlier_answer_and_keeps_every_earlier_value():
    link = work_study(n=6, quota=4)
    person = started(link, 1)
    first = person.item_on_screen()
    person.answer("positive")
    second = person.item_on_screen()
    person.answer("positive")
    current = person.item_on_screen()
    page = person.page().content.decode()
    back = re.search(r'class="back" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert back.endswith(f"revise={second}")
    revising = person.client.get(back).content.decode()
    assert 'id="revising"' in revising and f'name="item" value="{second}"' in revising
    assert re.search(r'value="positive"[^>]*checked', revising)  # the earlier answer, ready to change
    assert f"revise={first}" in revising  # and further back
    person.post(action="revise", item=second, label="negative")
    person.post(action="revise", item=second, label="positive")
    person.post(action="revise", item=first, label="negative")
    assert person.item_on_screen() == current  # back where they were: their current item stays theirs
    answer = Annotation.objects.get(item_id=second)
    assert answer.value == "positive"  # the report reads the latest answer
    assert list(AnnotationRevision.objects.filter(annotation=answer).values_list("value", flat=True)) == [
        "positive", "negative"]  # nothing the participant submitted is lost
    assert Annotation.objects.get(item_id=first).value == "negative"
    assert Annotation.objects.filter(annotator=person.participant.annotator).count() == 2  # no new answers


def test_a_revision_after_the_time_limit_or_of_a_skip_or_of_another_item_changes_nothing():
    link = work_study(n=6, quota=4)
    person = started(link, 1)
    skipped = person.item_on_screen()
    person.post(side="skip", action="answer", item=skipped, skip_reason="unsure")
    answered = person.item_on_screen()
    person.answer("positive")
    other = started(link, 2)
    assert other.item_on_screen() == skipped  # k = 1: the skipped item went to them
    other.answer("negative")
    others_item = other.item_on_screen()
    other.answer("negative")
    for item in (skipped, others_item, "1 OR 1=1"):
        page = person.post(action="revise", item=item, label="negative").content.decode()
        assert "That answer cannot be changed now." in page
    assert f"revise={skipped}" not in person.page().content.decode()  # a skipped item never comes back
    Participant.objects.filter(pk=person.participant.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    late = person.post(action="revise", item=answered, label="negative").content.decode()
    assert "Your time for this study ran out" in late
    assert Annotation.objects.get(item_id=answered).value == "positive"
    assert Annotation.objects.get(item_id=others_item).value == "negative"
    assert not AnnotationRevision.objects.exists()


def test_a_revision_in_a_closed_study_is_refused_and_keeps_the_answer():
    link = work_study(n=6, quota=4)
    person = started(link, 1)
    item = person.item_on_screen()
    person.answer("positive")
    link.is_open = False
    link.save(update_fields=["is_open"])
    response = person.post(action="revise", item=item, label="negative")
    assert response.status_code == 410 and "This study is closed" in response.content.decode()
    assert Annotation.objects.get(item_id=item).value == "positive"


def test_a_flag_sent_with_a_check_answer_is_kept_and_the_check_is_judged_on_the_answer():
    link = work_study(n=6, quota=3, attention=1)
    person = started(link, 1)
    person.answer("positive")
    check = person.item_on_screen()
    person.post(action="answer", item=check, label="negative", flag_tags="ambiguous")  # as instructed
    result = CheckResult.objects.get(participant=person.participant, item_id=check)
    assert (result.passed, result.value, result.note) == (True, "negative", "flagged: ambiguous")


def test_a_revision_with_an_invalid_answer_names_the_field_and_changes_nothing():
    link = work_study(n=6, quota=4)
    person = started(link, 1)
    item = person.item_on_screen()
    person.answer("positive")
    response = person.post(action="revise", item=item, label="neutral")
    body = response.content.decode()
    assert response.status_code == 422 and 'id="revising"' in body and "neutral" in body
    assert "is not one of the available choices" in body
    assert Annotation.objects.get(item_id=item).value == "positive" and not AnnotationRevision.objects.exists()


def test_a_skipped_or_flagged_check_is_neither_passed_nor_failed_for_the_two_failure_rule(carol):
    """Prolific lets only failed fair checks count toward a rejection (docs/crowd.md): two attention checks left
    unanswered (one skipped, one flagged) suggest no rejection; they are shown apart from failures."""
    link = work_study(n=6, quota=3, attention=2)  # the checks come after ⌊1·3/3⌋ = 1 and ⌊2·3/3⌋ = 2 work items
    person = started(link, 1)
    person.answer("positive")
    person.post(side="skip", action="answer", item=person.item_on_screen(), skip_reason="unsure")
    person.answer("positive")
    person.post(side="flag", action="answer", item=person.item_on_screen(), flag_comment="odd instruction")
    person.answer("positive")
    assert person.participant.stage == Participant.Stage.COMPLETED
    results = CheckResult.objects.filter(participant=person.participant).order_by("pk")
    assert [(r.role, r.passed, r.unanswered) for r in results] == [("attention", False, True)] * 2
    careless = started(link, 2)
    careless.answer("positive")
    careless.answer("positive")  # the first check, answered wrongly: a failure
    careless.answer("positive")
    careless.post(side="skip", action="answer", item=careless.item_on_screen(), skip_reason="unsure")
    careless.answer("positive")
    rows = {row.participant.platform_id: row for row in participant_rows(link)}
    assert (rows[pid(1)].failed["attention"], rows[pid(1)].unanswered["attention"]) == (0, 2)
    assert (rows[pid(1)].fair_failures, rows[pid(1)].suggestion) == (0, "approve")
    assert (rows[pid(2)].failed["attention"], rows[pid(2)].unanswered["attention"]) == (1, 1)
    assert (rows[pid(2)].fair_failures, rows[pid(2)].suggestion) == (1, "approve")
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    body = admin.get(f"/manage/studies/{link.pk}/").content.decode()
    assert '<td class="check-attention">0 passed, 0 failed, 2 not answered</td>' in body
    assert '<td class="check-attention">0 passed, 1 failed, 1 not answered</td>' in body
    assert admin.get(f"/manage/studies/{link.pk}/reject.csv").content.decode().splitlines() == [
        "participant_id,failed_attention_checks"]
    table = list(csv.DictReader(io.StringIO(admin.get(f"/manage/studies/{link.pk}/participants.csv").content.decode())))
    assert [(r["participant_id"], r["attention_passed"], r["attention_failed"], r["attention_unanswered"],
             r["suggestion"]) for r in table] == [(pid(1), "0", "0", "2", "approve"),
                                                  (pid(2), "0", "1", "1", "approve")]


def test_the_last_answer_of_the_quota_can_be_revised_from_the_completion_page_until_the_time_limit():
    link = work_study(n=6, quota=2)
    person = started(link, 1)
    first = person.item_on_screen()
    person.answer("positive")
    last = person.item_on_screen()
    completed = person.answer("positive").content.decode()
    assert 'id="completion-code"' in completed and "C0DE42" in completed
    back = re.search(r'id="revise-after".*?class="back" href="([^"]+)"', completed, flags=re.S).group(1)
    assert back.replace("&amp;", "&").endswith(f"revise={last}")
    revising = person.client.get(back.replace("&amp;", "&")).content.decode()
    assert 'id="revising"' in revising and f'name="item" value="{last}"' in revising
    assert f"revise={first}" in revising and "Back to your completion code" in revising
    assert 'value="leave"' not in revising  # finished: nothing to leave
    page = person.post(action="revise", item=last, label="negative").content.decode()
    assert 'id="completion-code"' in page  # back to the code
    person.post(action="revise", item=first, label="negative")
    assert Annotation.objects.get(item_id=last).value == "negative"
    assert Annotation.objects.get(item_id=first).value == "negative"
    assert list(AnnotationRevision.objects.filter(annotation__item_id=last).values_list("value", flat=True)) == [
        "positive"]  # the first value is kept
    participant = person.participant
    assert participant.stage == Participant.Stage.COMPLETED and participant.annotator.active
    assert Annotation.objects.filter(annotator=participant.annotator).count() == 2  # no new item was handed out
    other_tab = Client()
    other_tab.cookies = person.client.cookies
    elsewhere = other_tab.get(f"/study/{link.token}/run/", {"tab": "not-the-tab"}).content.decode()
    assert 'id="completion-code"' in elsewhere and 'id="revise-after"' not in elsewhere  # the one tab only
    Participant.objects.filter(pk=participant.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    late = person.post(action="revise", item=last, label="positive").content.decode()
    assert 'id="completion-code"' in late and 'id="revise-after"' not in late
    assert Annotation.objects.get(item_id=last).value == "negative"  # past the time limit: nothing changes
    expire_overdue()
    assert not Participant.objects.get(pk=participant.pk).annotator.active  # its time to revise is over


def test_a_completed_participant_cannot_revise_once_the_study_is_closed():
    link = work_study(n=6, quota=1)
    person = started(link, 1)
    item = person.item_on_screen()
    person.answer("positive")
    link.is_open = False
    link.save(update_fields=["is_open"])
    page = person.post(action="revise", item=item, label="negative").content.decode()
    assert 'id="completion-code"' in page and 'id="revise-after"' not in page
    assert Annotation.objects.get(item_id=item).value == "positive" and not AnnotationRevision.objects.exists()


def test_an_excluded_participant_is_not_offered_a_revision_and_cannot_send_one(carol):
    """Exclusion is final for the participant too (issue 35, item 6): the completion page loses its way back, a
    revision sent anyway changes nothing, and undoing the exclusion does not reopen it. Before the fix the page
    offered "Change your last answer" and the revision was silently dropped."""
    link = work_study(n=6, quota=2)
    person = started(link, 1)
    person.answer("positive")
    last = person.item_on_screen()
    assert 'id="revise-after"' in person.answer("positive").content.decode()
    admin = Client()
    admin.login(username=carol.username, password=PASSWORD)
    participant = person.participant
    admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/exclude/", {"reason": "careless"})
    page = person.page().content.decode()
    assert 'id="completion-code"' in page and 'id="revise-after"' not in page
    opened = person.client.get(f"/study/{link.token}/run/", {"tab": person.tab, "revise": last}).content.decode()
    assert 'id="revising"' not in opened and 'id="revise-after"' not in opened
    person.post(action="revise", item=last, label="negative")
    assert Annotation.objects.get(item_id=last).value == "positive" and not AnnotationRevision.objects.exists()
    admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/include/", {"reason": "mistake"})
    assert 'id="revise-after"' not in person.page().content.decode()  # the run stays ended
