"""What a crowd participant can reach (issue 26, item 5): their one study and nothing else — no other study, no
gold, no other participant's answers, no admin or researcher page or API; arrivals rate-limited per address;
no personal data beyond the platform's ids."""
from __future__ import annotations

import pytest
from django.core.cache import caches

from annotation.core.annotators import create_annotator
from annotation.core.batches import speakers_of
from annotation.crowd.models import Participant
from annotation.models import Annotation
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.crowd_helpers import Person, make_crowd_task, make_study, pid

pytestmark = pytest.mark.django_db
ARRIVALS_KEY = "crowd-arrivals:127.0.0.1"


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete(ARRIVALS_KEY)


def test_a_participant_reaches_no_admin_researcher_or_annotator_page_or_api():
    link = make_study(make_crowd_task(practice=0), consent="")
    person = Person(link, 1)
    person.start()
    annotator = person.participant.annotator
    pages = ["/", "/annotate/", f"/annotate/b/{link.batch_id}/", "/manage/", f"/manage/batches/{link.batch_id}/",
             f"/manage/studies/{link.pk}/", f"/manage/studies/{link.pk}/approve.csv", "/tasks/",
             f"/tasks/{link.batch.task_id}/", "/reports/", "/results/", "/llm/", "/api/docs/"]
    for page in pages:
        response = person.client.get(page)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), page
    assert person.client.get("/admin/").status_code == 302
    person.answer("positive")
    own = Annotation.objects.filter(annotator=annotator).values_list("pk", flat=True).get()
    for api in ("/api/v1/my/batches/", f"/api/v1/batches/{link.batch_id}/next/", "/api/v1/tasks/",
                f"/api/v1/annotations/{own}/"):
        assert person.client.get(api).status_code in (401, 403), api
    # and the participant's annotator account cannot log in at all
    assert not person.client.login(username=annotator.name, password="")


def test_a_link_reaches_one_study_only():
    first = make_study(make_crowd_task("StudyOne"), consent="")
    second = make_study(make_crowd_task("StudyTwo"), consent="")
    person = Person(first, 2)
    person.start()
    other = person.client.get(f"/study/{second.token}/run/")
    assert other.status_code == 403 and "has not arrived through the study link" in other.content.decode()
    posted = person.client.post(f"/study/{second.token}/run/", {"tab": person.tab, "action": "instructions"})
    assert posted.status_code == 403 and not Participant.objects.filter(link=second).exists()
    assert list(person.participant.annotator.batches.all()) == [first.batch]


def test_participants_never_see_gold_or_each_others_answers_or_ids():
    task = make_crowd_task("Secret", n=6, attention=1, practice=0, gold_marker=True)
    link = make_study(task, consent="", quota=3, overlap=2, gold_rate=0.5)
    first, second = Person(link, 3), Person(link, 4)
    first.start()
    for _ in range(5):
        first.answer("negative")
    pages = [second.arrive().content.decode(), second.post(action="instructions").content.decode()]
    for _ in range(5):
        pages.append(second.answer("positive").content.decode())
        pages.append(second.page().content.decode())
    shown = "\n".join(pages)
    assert "GOLD-" not in shown  # hidden gold, never sent
    assert pid(3) not in shown and first.participant.annotator.name not in shown
    assert " checked" not in shown  # the first participant's answers on the shared items are not preselected
    assert "please choose negative" in shown  # the attention item's text is shown, its expected answer is not


def test_arrivals_are_rate_limited_per_address(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 2
    link = make_study()
    assert Person(link, 5).arrive().status_code == 200
    assert Person(link, 6).arrive().status_code == 200
    refused = Person(link, 7).arrive()
    assert refused.status_code == 429 and "wait a minute" in refused.content.decode()
    assert not Participant.objects.filter(platform_id=pid(7)).exists()
    other = Person(link, 8)
    other.client.defaults["REMOTE_ADDR"] = "10.0.0.8"  # another address is not held back
    assert other.arrive().status_code == 200
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:10.0.0.8")


def test_nothing_but_the_platform_ids_is_kept_about_a_participant():
    link = make_study(consent="")
    person = Person(link, 9)
    person.client.get(f"/study/{link.token}/?PROLIFIC_PID={pid(9)}&STUDY_ID={'5' * 24}&SESSION_ID={'6' * 24}"
                      "&email=someone%40example.org&name=Someone", follow=True)
    participant = Participant.objects.get()
    stored = " ".join(str(getattr(participant, f.attname)) for f in Participant._meta.concrete_fields)
    user = participant.annotator.user
    assert "example.org" not in stored and "Someone" not in stored
    assert (user.email, user.first_name, user.last_name) == ("", "", "")
    assert (participant.platform_id, participant.platform_study_id, participant.platform_session_id) == (
        pid(9), "5" * 24, "6" * 24)


def test_a_participant_is_never_among_the_speakers_a_new_batch_is_assigned_to():
    """A participant exists for one study: a batch made with its language's speakers (batches.speakers_of) leaves
    them out, while they work and while, completed, they may still revise until their deadline."""
    link = make_study(make_crowd_task(n=4, attention=0, practice=0), consent="", quota=1)
    person = Person(link, 1)
    person.start()
    speaker = create_annotator("speaker-eng", languages={"eng-Latn": None})
    assert speakers_of("eng-Latn") == [speaker]
    person.answer("positive")
    assert person.participant.stage == Participant.Stage.COMPLETED and person.participant.annotator.active
    assert speakers_of("eng-Latn") == [speaker]
