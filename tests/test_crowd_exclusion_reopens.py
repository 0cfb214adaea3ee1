"""An excluded participant's answers no longer fill their overlap slots (docs/crowd.md, "Exclusion"): the items
they answered go back to the pool until k included answers are in, and no item ever has more than k included
answers, also when the exclusion lands while participants work through the live server at once."""
from __future__ import annotations

import re
import threading
import time
from collections import Counter

import pytest
import requests
from django.core.cache import caches
from django.db import connections

from annotation.crowd.models import Participant
from annotation.crowd.participants import exclude_annotator
from annotation.models import Annotation, BatchItem, Hold
from tests.conftest import require_postgres
from tests.crowd_helpers import Person, arrival_url, make_crowd_task, make_study

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 100_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def included_per_item(batch_id: int) -> Counter[int]:
    return Counter(Annotation.objects.filter(batch_id=batch_id, skipped=False, annotator__excluded_at__isnull=True)
                   .values_list("item_id", flat=True))


def work_through(base: str, link, n: int) -> int:
    """One participant's browser, as plain HTTP with its own cookies: arrive, pass the instructions, answer
    until the completion page. Returns how many answers the server accepted (the page moved on)."""
    session = requests.Session()
    page = session.get(base + arrival_url(link, n), timeout=60).text
    if 'id="study-full"' in page:  # every item had its k answers: told so at arrival, no code (issue 35, item 2)
        return 0
    tab = re.search(r'name="tab" value="([^"]+)"', page).group(1)
    run = f"{base}/study/{link.token}/run/"
    page = session.post(run, {"tab": tab, "action": "instructions", "csrfmiddlewaretoken": _csrf(session, page)},
                        timeout=60).text
    answered = 0
    while (item := re.search(r'name="item" value="(\d+)"', page)) is not None:
        assert answered <= link.quota, page[:500]  # an answer not taken would show its item again
        shown = re.search(r'name="shown" value="([^"]+)"', page).group(1)
        page = session.post(run, {"tab": tab, "action": "answer", "item": item.group(1), "shown": shown,
                                  "label": "positive", "csrfmiddlewaretoken": _csrf(session, page)}, timeout=60).text
        answered += 1
    # the code after the quota; a batch that ran out first says the study is full, with no code (issue 35, item 2)
    assert 'id="completion-code"' in page or 'id="study-full"' in page, page[:500]
    return answered


def _csrf(session: requests.Session, page: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    return found.group(1) if found else session.cookies.get("csrftoken", "")


def answer_all(person: Person, value: str) -> list[int]:
    """Arrive, pass the instructions and answer every item shown until the run ends; the items answered."""
    return person.answer_until_done(lambda item: {"label": value})


def test_excluding_a_participant_reopens_their_items_until_k_included_answers_are_in():
    link = make_study(make_crowd_task(n=4, attention=0, practice=0), consent="", quota=4, overlap=2)
    batch = link.batch
    careless, careful, too_late = Person(link, 1), Person(link, 2), Person(link, 3)
    assert len(answer_all(careless, "negative")) == len(answer_all(careful, "positive")) == 4
    assert answer_all(too_late, "positive") == []  # every item has its k = 2 answers
    assert set(included_per_item(batch.pk).values()) == {2}

    exclude_annotator(careless.participant.annotator, "answered negative to everything")

    assert set(BatchItem.objects.filter(batch=batch).values_list("human_answers", flat=True)) == {1}
    assert not careless.participant.annotator.active
    late = Person(link, 4)
    assert len(answer_all(late, "positive")) == 4 and late.participant.stage == Participant.Stage.COMPLETED
    assert set(included_per_item(batch.pk).values()) == {2}  # k included answers on every item again
    assert answer_all(Person(link, 5), "positive") == []  # and no more
    assert Annotation.objects.filter(annotator=careless.participant.annotator).count() == 4  # nothing lost


def test_an_exclusion_while_participants_work_at_once_ends_with_exactly_k_included_answers(live_server):
    """Twelve participants, each a thread with its own cookies (and the server a thread and a PostgreSQL
    connection per request), work through the live server; the exclusion of one who answered three items
    lands after the wave stored eight answers; then participants arrive one by one until one gets nothing:
    every item has exactly k included answers."""
    require_postgres()
    link = make_study(make_crowd_task(n=12, attention=0, practice=0), consent="", quota=3, overlap=2,
                      hold_seconds=120)
    batch = link.batch
    spammer = Person(link, 1)
    assert len(answer_all(spammer, "negative")) == 3
    posted: dict[int, int] = {}
    at_exclusion: list[int] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    barrier = threading.Barrier(13)

    def participant(n: int) -> None:
        try:
            barrier.wait()
            posted[n] = work_through(live_server.url, link, n)
        except BaseException as exc:  # every error fails the test below
            errors.append(exc)

    def exclusion() -> None:  # lands once the wave has stored eight answers, while it goes on
        try:
            barrier.wait()
            while Annotation.objects.filter(batch=batch).count() < 3 + 8:
                time.sleep(0.01)
            exclude_annotator(spammer.participant.annotator, "answered negative to everything")
            with lock:
                at_exclusion.append(Annotation.objects.filter(batch=batch).count())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=participant, args=(n,)) for n in range(10, 22)]
    threads.append(threading.Thread(target=exclusion))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    assert 3 + 8 <= at_exclusion[0] < 3 + 24  # the exclusion landed while the wave was still answering
    assert max(included_per_item(batch.pk).values()) <= 2  # never above k counting included answers
    n = 100
    while work_through(live_server.url, link, n) > 0:  # the rest, one after another, until nothing is left
        n += 1

    per_item = included_per_item(batch.pk)
    assert len(per_item) == 12 and set(per_item.values()) == {2}  # exactly k on every item, none above
    assert Annotation.objects.filter(batch=batch).count() == 12 * 2 + 3  # and the excluded 3, kept
    stored = Counter(Annotation.objects.filter(batch=batch, annotator__participant__platform_id__in=[
        f"{m:024x}" for m in range(10, 22)]).values_list("annotator__participant__platform_id", flat=True))
    for m in range(10, 22):  # every answer a participant sent in the concurrent wave was stored
        assert stored[f"{m:024x}"] == posted[m], m
    assert set(BatchItem.objects.filter(batch=batch).values_list("human_answers", flat=True)) == {2}
    assert not Hold.objects.filter(batch_item__batch=batch).exists()
