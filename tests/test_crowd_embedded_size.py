"""Issue 36, item 3: when a study link is made on the embedded default (SQLite), the page says how large a crowd
that deployment was measured to serve (settings.CROWD_EMBEDDED_MEASURED_PARTICIPANTS, from bench/bench_crowd.py;
docs/crowd.md), before the link is made and in the message after; on PostgreSQL it says nothing of the kind.

The suite runs on PostgreSQL, so the SQLite case is reached by answering `on_sqlite` (the one place the page asks
which database it runs on) as SQLite would; tests/test_crowd_sqlite_busy.py runs the participant's pages on a
real SQLite file."""
from __future__ import annotations

import pytest
from django.test import Client, override_settings

from annotation.crowd import manage
from tests.batch_helpers import fast_password_hashing, make_batch  # noqa: F401  (autouse: quick annotator creation)
from tests.crowd_helpers import make_crowd_task

pytestmark = pytest.mark.django_db
NOTE = 'id="embedded-crowd-size"'


def _admin(carol) -> Client:
    admin = Client()
    admin.force_login(carol)
    return admin


def test_on_postgresql_the_new_link_page_states_no_embedded_crowd_size(carol):
    batch = make_batch(make_crowd_task(n=5))
    assert manage.on_sqlite() is False
    assert NOTE not in _admin(carol).get(f"/manage/studies/new/{batch.pk}/").content.decode()


@override_settings(CROWD_EMBEDDED_MEASURED_PARTICIPANTS=250)
def test_on_sqlite_the_new_link_page_and_its_message_state_the_measured_crowd(carol, monkeypatch):
    monkeypatch.setattr(manage, "on_sqlite", lambda: True)
    batch = make_batch(make_crowd_task(n=5))
    admin = _admin(carol)
    page = admin.get(f"/manage/studies/new/{batch.pk}/").content.decode()
    assert NOTE in page and "it served 250 participants arriving within a minute" in page
    assert "needs PostgreSQL behind gunicorn" in page
    made = admin.post(f"/manage/studies/new/{batch.pk}/", {
        "quota": 3, "minutes": 30, "completion_code": "C0DE42", "platform": "prolific", "gold_rate": 0,
        "min_seconds": 0, "straightline_run": 0, "practice_failures_allowed": 1}, follow=True)
    assert made.status_code == 200
    assert [str(m) for m in made.context["messages"]] == [f"Study link created. {manage.embedded_crowd_note()}"]
    assert "250 participants" in manage.embedded_crowd_note()
