"""What a first-time user reads on the pages (issue 14 item 11): empty leaderboards, LLM annotators without
an endpoint, one task named once per batch, which "remaining" is which, one unit for the hold,
each annotation page with its own kind's script only."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from tests.conftest import make_annotator
from tests.loop_data import batch_of
from tests.test_results_humans import MAPPED, answer, store_reports
from tests.test_results_humans import make_task as make_mapped_task

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_results_without_models_say_there_is_nothing_to_rank_against(alice, dave):
    task = make_mapped_task("task 0", MAPPED[0], ["a"] * 5)
    answer(task, alice, "aaaab")
    store_reports()
    body = client_for(dave).get("/results/").content.decode()
    assert "among 0 models" not in body and "1st of 1" not in body
    assert "no model scores are stored yet, so there is nothing to rank against" in body
    assert "Ask an admin to import MTEB results" in body


def test_llm_home_lists_llm_annotators_that_have_no_endpoint(dave):
    make_annotator("gpt-imported", {"eng-Latn": "native"}, agent="llm")
    body = client_for(dave).get("/llm/").content.decode()
    assert "No LLM annotator yet" not in body
    assert 'id="llm-unconfigured"' in body and "<strong>gpt-imported</strong>" in body


def test_llm_home_says_none_exists_only_when_none_does(dave):
    body = client_for(dave).get("/llm/").content.decode()
    assert "No LLM annotator yet." in body and 'id="llm-unconfigured"' not in body


def test_the_annotator_home_names_a_default_named_batch_by_its_task_once(alice):
    make_batch(make_task("Emotion (English)", n=2), [alice])
    make_batch(make_task("STS (Danish)", n=2, language="dan-Latn"), [alice], name="Pilot round")
    body = client_for(alice.user).get("/").content.decode()
    assert body.count("Emotion (English)") == 1
    assert "Emotion (English) · eng-Latn" not in body
    assert "<strong>Pilot round</strong> <span class=\"muted\">STS (Danish) · classification · dan-Latn" in body


def test_batch_page_says_which_remaining_is_which_and_shows_the_hold_in_minutes(alice, carol):
    batch = make_batch(make_task(n=3), [alice], overlap=1, hold_seconds=900)
    body = client_for(carol).get(f"/manage/batches/{batch.pk}/").content.decode()
    assert "hold 15 min" in body and "900 s" not in body
    assert "3 answers still needed (not yet given or held)" in body
    assert ">Can still get</th>" in body and 'id="remaining-definitions"' in body
    listing = client_for(carol).get("/manage/batches/").content.decode()
    assert ">Answers still needed</th>" in listing and ">Remaining</th>" not in listing


def test_an_odd_hold_stays_in_seconds(alice, carol):
    batch = make_batch(make_task(n=1), [alice], hold_seconds=90)
    body = client_for(carol).get(f"/manage/batches/{batch.pk}/").content.decode()
    assert "hold 90 s" in body


@pytest.mark.parametrize("kind, own", [("sts", {"slider.js"}), ("clustering", {"clusters.js"}),
                                       ("classification", set()), ("likert", set())])
def test_an_annotation_page_loads_the_script_of_its_own_kind_only(alice, kind, own):
    batch = batch_of(kind, [alice])
    body = client_for(alice.user).get(f"/annotate/b/{batch.pk}/", follow=True).content.decode()
    scripts = set(re.findall(r'src="/static/(?:annotation|kinds/[a-z_]+)/([a-z]+\.js)"', body))
    assert scripts == {"keys.js", "drafts.js", "shortcuts.js"} | own
