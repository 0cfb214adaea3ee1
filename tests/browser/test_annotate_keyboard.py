"""One batch of every task kind, answered with the keyboard only, ends up as the right rows in the database."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tasks_app.models import Item
from tests.browser.helpers import enter_and_wait, item_on_screen, open_batch, stored
from tests.loop_data import batch_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def external_id(item_id: int) -> str:
    return Item.objects.get(pk=item_id).external_id


def answer_all(page: Page, keys_by_item: dict[str, list[str]], first: int) -> None:
    """Type each item's keys (chosen by its external id, since the engine picks the order), then Enter."""
    current: int | None = first
    while current is not None:
        for key in keys_by_item[external_id(current)]:
            page.keyboard.press(key)
        current = enter_and_wait(page)
    page.wait_for_selector(".item.done")


def test_classification_batch_by_number_keys(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("classification", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("3")
    assert page.is_checked("input[name=label][value=neutral]")
    screenshot(page, "classification")
    answer_all(page, {"c1": ["1"], "c2": ["2"]}, first)
    assert sorted(stored(alice, batch).values()) == ["negative", "positive"]
    assert {external_id(i): v for i, v in stored(alice, batch).items()} == {"c1": "positive", "c2": "negative"}


def test_reranking_submits_only_when_every_candidate_is_judged(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("reranking", [alice])
    page = logged_in_page("alice")
    current = open_batch(page, live_server.url, batch)
    expected = {}
    while current is not None:
        ids = [c["id"] for c in Item.objects.get(pk=current).payload["candidates"]]
        for key in ["1", "2", "2"]:  # first relevant; second relevant, then toggled to not relevant
            page.keyboard.press(key)
        if len(ids) > 2:  # the third is not judged yet: Enter must not submit
            page.keyboard.press("Enter")
            page.wait_for_timeout(300)
            assert item_on_screen(page) == current and current not in stored(alice, batch)
            screenshot(page, "reranking")
            page.keyboard.press("0")  # the rest: not relevant
        expected[current] = {cid: int(i == 0) for i, cid in enumerate(ids)}
        current = enter_and_wait(page)
    assert stored(alice, batch) == expected


def test_graded_relevance_scores_are_typed_and_tabbed(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("graded_relevance", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.type("7")
    page.keyboard.press("Tab")
    page.keyboard.type("3")
    screenshot(page, "graded_relevance")
    answer_all(page, {"g1": []}, first)
    assert list(stored(alice, batch).values()) == [{"x1": 7, "x2": 3}]


def test_sts_slider_must_be_touched_and_moves_by_arrows_and_numbers(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("sts", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("Enter")  # untouched slider: no silent default
    page.wait_for_timeout(300)
    assert item_on_screen(page) == first and stored(alice, batch) == {}
    page.keyboard.press("ArrowRight")  # from the middle (2.5) one step of 0.5
    assert page.input_value("#id_score") == "3"
    page.keyboard.press("4")
    page.keyboard.press("ArrowLeft")
    assert page.input_value("#id_score") == "3.5"
    screenshot(page, "sts")
    answer_all(page, {"s1": [], "s2": ["1"]}, first)
    assert {external_id(i): v for i, v in stored(alice, batch).items()} == {"s1": 3.5, "s2": 1}


def test_pairwise_by_a_b_and_t(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("pairwise", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("b")
    screenshot(page, "pairwise")
    answer_all(page, {"w1": ["t"], "w2": ["a"]}, first)
    assert {external_id(i): v for i, v in stored(alice, batch).items()} == {"w1": "tie", "w2": "a"}


def test_likert_number_keys_rate_each_axis_in_turn(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("likert", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("6")
    page.keyboard.press("3")
    screenshot(page, "likert")
    answer_all(page, {"l1": []}, first)
    assert list(stored(alice, batch).values()) == [{"overall": 6, "coherence": 3}]


def test_clustering_by_keys_new_cluster_and_existing_ones(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("clustering", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    for key in ["n", "1", "n", "2"]:
        page.keyboard.press(key)
    assert page.text_content("[data-unassigned]") == "1 text without a cluster"
    screenshot(page, "clustering")
    page.keyboard.press("Enter")  # one text is left: not submitted
    page.wait_for_timeout(300)
    assert stored(alice, batch) == {}
    answer_all(page, {"k1": ["1"]}, first)
    assert list(stored(alice, batch).values()) == [["C1", "C1", "C2", "C2", "C1"]]


def test_clusters_can_be_renamed_and_merged_in_the_groups_panel(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("clustering", [alice])
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    for key in ["n", "1", "n", "2", "n"]:  # C1: texts 1, 2 · C2: texts 3, 4 · C3: text 5
        page.keyboard.press(key)
    page.fill(".group-list > li:nth-child(1) .cname", "sport")
    page.keyboard.press("Enter")  # commits the name, does not submit
    page.select_option(".group-list > li:nth-child(3) .merge", "sport")
    names = page.eval_on_selector_all(".ctext input[name]", "els => els.map(e => e.value)")
    assert names == ["sport", "sport", "C2", "C2", "sport"]
    assert page.eval_on_selector_all(".group .cname", "els => els.map(e => e.value)") == ["sport", "C2"]
    assert page.text_content(".group-list > li:nth-child(1) .count") == "(3)"
    screenshot(page, "clustering_renamed_merged")
    page.focus(".ctext")
    enter_and_wait(page)
    assert list(stored(alice, batch).values()) == [["sport", "sport", "C2", "C2", "sport"]]
