"""No completion code without the work (issue 35, item 2; docs/crowd.md, "No code without the work"): a
participant who skips every item, or arrives when every item has its k answers, gets no code, is not suggested
for approval and is in neither the approve nor the bonus list; a full study says so to the participant (please
return) and on the participants table; a researcher may state a minimum below the quota for a batch that runs
out. Before the fix each of these runs ended on the completion page with the code after 0 answers."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.cache import caches
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.crowd import studies
from annotation.crowd.models import Participant
from annotation.models import Annotation
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, make_crowd_task, make_study, pid

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def work_study(n: int, quota: int, name: str = "CrowdSentiment", **link):
    return make_study(make_crowd_task(name, n=n, attention=0, practice=0), consent="", quota=quota, overlap=1,
                      **link)


def admin_client(carol) -> Client:
    client = Client()
    client.login(username=carol.username, password=PASSWORD)
    return client


def ids(client: Client, link, which: str) -> list[str]:
    text = client.get(f"/manage/studies/{link.pk}/{which}.csv", {"amount": "0.50"}).content.decode()
    return [row["participant_id"] for row in csv.DictReader(io.StringIO(text))]


def answer_all(person: Person, label: str = "positive") -> str:
    while (item := person.item_on_screen()) is not None:
        page = person.post(action="answer", item=item, label=label).content.decode()
    return page


def test_skipping_every_item_earns_no_code_and_is_never_approved(carol):
    link = work_study(n=6, quota=4)
    skipper = Person(link, 1)
    skipper.start()
    page = ""
    for _ in range(6):  # the probe: every item skipped, as fast as the server allows
        page = skipper.post(side="skip", action="answer", item=skipper.item_on_screen(),
                            skip_reason="unsure").content.decode()
    assert "C0DE42" not in page and 'id="completion-code"' not in page
    assert "No items are left for you" in page and "needs 4 answered items" in page
    participant = skipper.participant
    assert (participant.stage, participant.returned_reason) == ("returned", "too_few_answers")
    assert not participant.annotator.active
    assert Annotation.objects.filter(annotator=participant.annotator, skipped=True).count() == 6
    again = skipper.page().content.decode()  # the page stays without the code
    assert "C0DE42" not in again and "No items are left for you" in again
    admin = admin_client(carol)
    assert ids(admin, link, "approve") == [] and ids(admin, link, "bonus") == []
    table = {row["participant_id"]: row for row in csv.DictReader(io.StringIO(
        admin.get(f"/manage/studies/{link.pk}/participants.csv").content.decode()))}
    assert (table[pid(1)]["n_work"], table[pid(1)]["n_skipped"], table[pid(1)]["returned_reason"],
            table[pid(1)]["suggestion"]) == ("0", "6", "too_few_answers", "return")
    page = admin.get(f"/manage/studies/{link.pk}/").content.decode()
    assert "returned (too_few_answers)" in page


def test_an_arrival_at_a_full_study_is_asked_to_return_with_no_code_and_the_table_says_full(carol):
    link = work_study(n=2, quota=2)
    first = Person(link, 1)
    first.start()
    assert 'id="completion-code">C0DE42<' in answer_all(first)
    late = Person(link, 2)
    page = late.arrive().content.decode()  # straight to the page: no consent, no instructions to sit through
    assert "This study is full: please return it" in page and "Return submission" in page
    assert "C0DE42" not in page and "<form" not in page
    participant = late.participant
    assert (participant.stage, participant.returned_reason) == ("returned", "full")
    assert not Annotation.objects.filter(annotator=participant.annotator).exists()
    admin = admin_client(carol)
    assert ids(admin, link, "approve") == [pid(1)] and ids(admin, link, "bonus") == [pid(1)]
    assert "returned (full)" in admin.get(f"/manage/studies/{link.pk}/").content.decode()


def test_a_study_that_fills_while_a_participant_reads_the_instructions_says_full_not_the_code():
    link = work_study(n=2, quota=2)
    reader = Person(link, 1)
    reader.arrive()  # room when they arrived
    fast = Person(link, 2)
    fast.start()
    answer_all(fast)
    page = reader.post(action="instructions").content.decode()
    assert "This study is full" in page and "C0DE42" not in page
    assert reader.participant.returned_reason == "full"


def test_a_stated_minimum_earns_the_code_when_the_batch_runs_out_before_the_quota(carol):
    link = work_study(n=4, quota=4, min_answers=3)
    worker = Person(link, 1)
    worker.start()
    worker.post(side="skip", action="answer", item=worker.item_on_screen(), skip_reason="unsure")
    assert 'id="completion-code">C0DE42<' in answer_all(worker)  # 3 answers, the batch's rest: the stated minimum
    assert worker.participant.stage == Participant.Stage.COMPLETED
    short = work_study(n=3, quota=3, name="Short", min_answers=2)
    partial = Person(short, 2)
    partial.start()
    partial.answer("positive")
    for _ in range(2):
        page = partial.post(side="skip", action="answer", item=partial.item_on_screen(),
                            skip_reason="unsure").content.decode()
    assert "C0DE42" not in page and "needs 2 answered items" in page
    assert ids(admin_client(carol), short, "approve") == []


def test_a_minimum_above_the_quota_or_negative_is_refused_naming_the_field():
    link = work_study(n=3, quota=2)
    wanted = studies.LinkSettings(quota=2, minutes=10, completion_code="X", min_answers=3)
    assert studies.link_problems(link.batch, wanted) == [
        ("min_answers", "must be from 0 (the quota) to the quota 2, got 3")]
    with pytest.raises(CommandError, match="--min-answers: must be from 0"):
        call_command("study_link", str(link.batch_id), "--quota", "2", "--minutes", "10", "--completion-code", "X",
                     "--min-answers", "-1")
