"""The session store (SESSION_ENGINE): Django's database store, without the query that asks whether a new
session key is taken.

Django's store draws a key, asks the database whether a row has it, then INSERTs the row with `must_create`,
which fails with CreateError on a taken key and draws again (`db_sessions.SessionStore.create`): the question
is answered twice. A new session is made on every crowd participant's arrival (the arrival cycles the key,
annotation/crowd/views.py) and on every login; the INSERT alone now decides (32 random characters of 36, about
165 bits, so a taken key is not expected, and is still caught). docs/crowd.md, "Where a participant's request
goes".
"""
from __future__ import annotations

from django.contrib.sessions.backends import db as db_sessions
from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.utils.crypto import get_random_string


class SessionStore(db_sessions.SessionStore):
    """The database session store whose new keys are checked by their INSERT only."""

    def _get_new_session_key(self) -> str:
        return get_random_string(32, VALID_KEY_CHARS)
