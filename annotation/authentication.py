"""API token authentication, as DRF's, with the token and its user read by one prepared statement.

Every request of the annotator loop authenticates; DRF's `select_related('user').get(key=...)` cost ~1 ms of
Python to build on the 2-core test machine (see annotation/core/rawsql.py). Same rules: unknown key or inactive
user → 401. Failures are counted per address, and past a limit a failure is answered 429 for a while
(hume/lockout.py); a valid token is never refused.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.core import rawsql
from hume import lockout

User = get_user_model()
_SQL = (f"SELECT {rawsql.columns(Token, 't')}, {rawsql.columns(User, 'u')} FROM {Token._meta.db_table} t "
        f"JOIN {User._meta.db_table} u ON u.{User._meta.pk.column} = t.user_id WHERE t.key = %s")


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request: Any) -> tuple[User, Token] | None:
        scheme = authentication.get_authorization_header(request).split()[:1]
        if not scheme or scheme[0].lower() != self.keyword.lower().encode():
            return None  # no token offered: not this class's business (and not a failure)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            # only failures are throttled: a valid token works from a throttled address too (issue 23), so a
            # client sending bad tokens, or many people behind one address, cannot lock others out of the API
            lockout.refuse_if_throttled(request)
            lockout.count_failure(request)
            raise

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        row = rawsql.one(_SQL, [key]) if "\x00" not in key else None
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = rawsql.instance(Token, row[:rawsql.width(Token)])
        token.user = rawsql.instance(User, row[rawsql.width(Token):])
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token
