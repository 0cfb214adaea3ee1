"""Queries per participant request (issue 26, item 4): each page of a crowd study reads a constant number of
queries, whatever the number of participants who came before and the number of items in the batch.

The count is what grows a request's time under a crowd (docs/crowd.md, "Under load"): on the shared
development machine 300 participants made about 15 queries per request before these pages read the study's
check items once per process and the tab's last sighting only when it is stale. A time is measured by
bench/bench_crowd.py, never here; this test counts.
"""
from __future__ import annotations

import re

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.crowd.models import Participant, StudyLink
from annotation.models import Annotation
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.crowd_helpers import Person, arrival_url, make_crowd_task, make_study

pytestmark = pytest.mark.django_db

# The most queries each request may read, measured on PostgreSQL (a test transaction adds its savepoints to
# the engine's count). Before: an arrival (then three requests) 30, a work item's page 15, its answer 16, the
# completion page (it ends the run, which releases the participant's holds) 16. An arrival also sweeps the
# study's overdue participants (one UPDATE since a completed participant stays active until their deadline),
# and a new participant's arrival asks once whether any item of the batch still takes an answer (one index
# probe, so that an arrival at a full study is told to return before consent, issue 35 item 2): 24. Issue 36:
# every request after the arrival reads the link with the participant (one query, not two), and a work answer
# finds its held item in one query instead of running the next-item step again: arrival 23, instructions 3,
# a page 12 (the first work page, which holds), a submit 12 (the practice answer's feedback page; a work
# answer is 8, a check's 11). The item counter ("Item 3 of 7", issue 35 item 7) reads the checks answered on
# each item page: a page 13. The arrival's remainder (issue 36): a new participant's row is written with its
# first tab (no UPDATE after the INSERT) and a new session is one INSERT (hume/sessions.py, no SELECT first):
# arrival 21.
MOST = {"arrival": 21, "instructions": 3, "page": 13, "submit": 12}


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def walk(link: StudyLink, n: int) -> list[tuple[str, int]]:
    """Participant n's whole run, as (request, queries) in order: the arrival (the link and its redirect),
    the instructions, then each page and its answer (practice, work, attention and gold checks) to the end."""
    person = Person(link, n)
    counts = []
    with CaptureQueriesContext(connection) as queries:
        page = person.client.get(arrival_url(link, n), follow=True).content.decode()
    counts.append(("arrival", len(queries)))
    person.tab = re.search(r'name="tab" value="([^"]+)"', page).group(1)
    with CaptureQueriesContext(connection) as queries:
        person.client.post(f"/study/{link.token}/run/", {"tab": person.tab, "action": "instructions"})
    counts.append(("instructions", len(queries)))
    for _ in range(20):
        with CaptureQueriesContext(connection) as queries:
            page = person.page().content.decode()
        counts.append(("page", len(queries)))
        item = re.search(r'name="item" value="(\d+)"', page)
        if item is None:
            assert 'id="completion-code">C0DE42<' in page, page[:2000]
            return counts
        with CaptureQueriesContext(connection) as queries:
            answered = person.client.post(f"/study/{link.token}/run/", {
                "tab": person.tab, "action": "answer", "item": item.group(1), "label": "negative"})
        assert answered.status_code in (200, 302)
        counts.append(("submit", len(queries)))
    raise AssertionError("the run did not reach the completion page")


def study(name: str, n_items: int) -> StudyLink:
    """Quota 4, k = 3: a practice item, an attention check and a hidden gold check after the second work item."""
    return make_study(make_crowd_task(name, n=n_items), consent="", overlap=3, gold_rate=0.5)


def test_each_participant_request_reads_as_many_queries_in_a_large_study_as_in_a_small_one():
    small_study = study("Small", 8)  # room for two participants at k = 3
    walk(small_study, 1)  # one participant before: the process has read the study's check items once
    small = walk(small_study, 2)
    large = study("Large", 150)
    for n in range(100, 112):  # twelve participants finished before the one measured
        walk(large, n)
    assert Participant.objects.filter(link=large, stage="completed").count() == 12
    assert Annotation.objects.filter(batch=large.batch).count() == 48
    measured = walk(large, 200)
    assert measured == small
    # practice page, its answer (the feedback page), 4 work items and 2 checks, the completion page
    assert [name for name, _ in measured] == ["arrival", "instructions"] + ["page", "submit"] * 7 + ["page"]
    for name, n_queries in measured:
        assert n_queries <= MOST[name], (name, n_queries, measured)
