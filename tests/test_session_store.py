"""The session store (hume/sessions.py): a new session is one INSERT, without Django's query that first asks
whether the drawn key is taken, and a taken key is still never shared: the INSERT refuses it and another key is
drawn. Every crowd arrival makes a session (docs/crowd.md, "Where a participant's request goes")."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext

from hume import sessions

pytestmark = pytest.mark.django_db


def test_the_app_stores_its_sessions_with_the_store_that_skips_the_key_query():
    expected = "hume.sqlite_busy" if connection.vendor == "sqlite" else "hume.sessions"
    assert settings.SESSION_ENGINE == expected


def test_a_new_session_is_written_by_one_insert_and_no_select():
    store = sessions.SessionStore()
    store["crowd:1"] = {"participant": 7, "secret": "s"}
    with CaptureQueriesContext(connection) as queries:
        store.create()
    statements = [query["sql"].split()[0].upper() for query in queries if "django_session" in query["sql"]]
    assert statements == ["INSERT"]
    assert sessions.SessionStore(store.session_key).load() == {"crowd:1": {"participant": 7, "secret": "s"}}


class DrawsTakenKeyFirst(sessions.SessionStore):
    """A store whose first drawn key is one another browser's session already has (what the 165 random bits make
    all but impossible), so the INSERT's refusal is what keeps the two apart."""

    taken = ""

    def _get_new_session_key(self) -> str:
        if self.taken:
            key, DrawsTakenKeyFirst.taken = self.taken, ""
            return key
        return super()._get_new_session_key()


def test_a_drawn_key_that_is_taken_is_refused_by_the_insert_and_another_is_drawn():
    other = sessions.SessionStore()
    other["crowd:1"] = {"participant": 1, "secret": "theirs"}
    other.create()
    DrawsTakenKeyFirst.taken = other.session_key
    mine = DrawsTakenKeyFirst()
    mine["crowd:1"] = {"participant": 2, "secret": "mine"}
    mine.create()
    assert mine.session_key != other.session_key and len(mine.session_key) == 32
    assert Session.objects.count() == 2
    assert sessions.SessionStore(other.session_key).load()["crowd:1"]["secret"] == "theirs"
    # (signed with the class's name as salt: read back by the same class)
    assert DrawsTakenKeyFirst(mine.session_key).load()["crowd:1"]["secret"] == "mine"
