"""The admins' progress dashboard: per batch and per annotator, live (htmx polling), CSV export."""
from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.core import assignment as engine
from annotation.core.progress import batch_progress
from annotation.models import Annotator
from hume.lib.csv_safety import csv_cell

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from .conftest import make_annotator


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def erin(db: None) -> Annotator:
    return make_annotator("erin", {"eng-Latn": "fluent"})


@pytest.fixture
def busy_batch(alice, erin):
    """k = 2 over 3 items: alice answers two (30 s and 50 s), skips one; erin answers one and holds one."""
    batch = make_batch(make_task(n=3), [alice, erin], overlap=2)
    t0 = timezone.now()
    for seconds in (30, 50):
        item = engine.next_item(alice, batch, now=t0)
        engine.submit_answer(alice, batch, item, "positive", now=t0 + timedelta(seconds=seconds))
    engine.skip_item(alice, batch, engine.next_item(alice, batch), reason="=cmd|' /C calc'!A0")
    item = engine.next_item(erin, batch, now=t0)
    engine.submit_answer(erin, batch, item, "negative", now=t0 + timedelta(seconds=40))
    engine.flag_item(erin, batch, item, comment="<script>alert(1)</script> label set misses neutral")
    engine.next_item(erin, batch)
    return batch


def test_progress_counts_done_held_remaining_and_median_time(busy_batch):
    figures = batch_progress(busy_batch)
    assert (figures.items, figures.needed, figures.done, figures.held, figures.remaining) == (3, 6, 3, 1, 2)
    assert (figures.complete_items, figures.percent, figures.median_ms) == (1, 50, 40_000)
    rows = {r.name: (r.status, r.done, r.skipped, r.flagged, r.held, r.remaining, r.median_ms)
            for r in figures.annotators}
    assert rows == {"alice": ("done", 2, 1, 0, 0, 0, 40_000), "erin": ("working", 1, 0, 1, 1, 2, 40_000)}
    assert [(a.annotator.name, a.skipped, a.flagged) for a in figures.issues] == [("erin", False, True),
                                                                                   ("alice", True, False)]


def test_the_dashboard_page_polls_a_partial_every_five_seconds(busy_batch, carol):
    response = client_for(carol).get(f"/manage/batches/{busy_batch.pk}/")
    body = response.content.decode()
    assert response.status_code == 200 and "<html" in body
    assert f'hx-get="/manage/batches/{busy_batch.pk}/" hx-trigger="every 5s" hx-swap="outerHTML"' in body
    assert "Vary" in response and "HX-Request" in response["Vary"]


def test_an_htmx_poll_gets_only_the_fresh_partial(busy_batch, carol, alice):
    admin = client_for(carol)
    before = admin.get(f"/manage/batches/{busy_batch.pk}/", HTTP_HX_REQUEST="true").content.decode()
    engine.set_active(alice, False)
    after = admin.get(f"/manage/batches/{busy_batch.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert before.startswith('<section class="card" id="progress"') and "<html" not in before
    assert "<strong>3</strong> of 6 answers (50%)" in before
    assert "<td><strong>done</strong></td>" in before and "<td><strong>inactive</strong></td>" in after


def test_comments_are_escaped_on_the_dashboard(busy_batch, carol):
    body = client_for(carol).get(f"/manage/batches/{busy_batch.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; label set misses neutral" in body


def test_the_batch_list_shows_each_batch_and_polls(busy_batch, carol):
    admin = client_for(carol)
    page = admin.get("/manage/batches/").content.decode()
    partial = admin.get("/manage/batches/?state=open", HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 5s"' in page and busy_batch.name in page
    assert partial.startswith('<div id="batch-overview" hx-get="/manage/batches/?state=open"')
    assert "<td>3 / 6</td><td>1</td><td>2</td>" in partial


def test_the_progress_csv_has_one_row_per_annotator(busy_batch, carol):
    response = client_for(carol).get(f"/manage/batches/{busy_batch.pk}/progress.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert [(r["annotator"], r["status"], r["done"], r["held"], r["remaining"], r["median_seconds"])
            for r in rows] == [("alice", "done", "2", "0", "0", "40.0"), ("erin", "working", "1", "1", "2", "40.0")]


def test_the_issues_csv_cannot_run_as_a_spreadsheet_formula(busy_batch, carol):
    response = client_for(carol).get(f"/manage/batches/{busy_batch.pk}/issues.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["skip_reason"] for r in rows] == ["", "'=cmd|' /C calc'!A0"]
    assert rows[0]["flag_comment"] == "<script>alert(1)</script> label set misses neutral"


@pytest.mark.parametrize(("value", "cell"), [
    ("=1+1", "'=1+1"), ("+33 6", "'+33 6"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("-0.5", "-0.5"), ("+3", "+3"), (-7, "-7"), ("plain", "plain"), (None, ""),
])
def test_csv_cells_starting_with_formula_characters_are_quoted_unless_plain_numbers(value, cell):
    assert csv_cell(value) == cell


def test_the_progress_api_returns_the_same_figures(busy_batch, dave):
    body = client_for(dave).get(f"/api/v1/batches/{busy_batch.pk}/progress/").json()
    assert (body["done"], body["held"], body["remaining"], body["percent"]) == (3, 1, 2, 50)
    assert [(a["name"], a["agent"], a["status"], a["held"]) for a in body["annotators"]] == [
        ("alice", "human", "done", 0), ("erin", "human", "working", 1)]
    assert body["issues"][0]["flag_comment"].endswith("label set misses neutral")


def test_annotators_cannot_open_the_dashboard(busy_batch, alice, bob):
    assert client_for(alice.user).get(f"/manage/batches/{busy_batch.pk}/").status_code == 403
    assert client_for(bob.user).get(f"/manage/batches/{busy_batch.pk}/").status_code == 404
    assert client_for(alice.user).get(f"/api/v1/batches/{busy_batch.pk}/progress/").status_code == 403
    assert client_for(alice.user).get(f"/manage/batches/{busy_batch.pk}/progress.csv").status_code == 403
