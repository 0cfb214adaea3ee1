"""`manage.py create_user` (issue 35, item 8): a researcher, an admin or an annotator who logs in, made without
the Django shell; the password from stdin, the environment or a prompt (never an argument), checked by the
validators; nothing created on any refusal."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Annotator
from hume.roles import roles_of

from .batch_helpers import fast_password_hashing  # noqa: F401

pytestmark = pytest.mark.django_db
STRONG = "violet-harbour-listens-42"
ROOT = Path(__file__).resolve().parent.parent


def create(monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str | None = None) -> str:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    out = io.StringIO()
    call_command("create_user", *args, stdout=out)
    return out.getvalue()


def logs_in(name: str, password: str) -> bool:
    return Client().login(username=name, password=password)


@pytest.mark.parametrize(("role", "roles", "staff"), [("researcher", {"researcher"}, False),
                                                      ("admin", {"admin"}, True)])
def test_a_researcher_or_an_admin_is_created_with_the_password_from_stdin(monkeypatch, role, roles, staff) -> None:
    out = create(monkeypatch, "erin", "--role", role, "--password-stdin", stdin=STRONG + "\n")
    user = get_user_model().objects.get(username="erin")
    assert out == f"User erin created (id {user.pk}, role {role}).\n"
    assert set(roles_of(user)) == roles and user.is_staff is staff and not user.is_superuser
    assert logs_in("erin", STRONG)
    assert not Annotator.objects.filter(user=user).exists()


def test_the_researcher_reads_reports_and_the_admin_manages(monkeypatch) -> None:
    create(monkeypatch, "rita", "--role", "researcher", "--password-stdin", stdin=STRONG)
    monkeypatch.setenv("HUME_USER_PASSWORD", STRONG)
    create(monkeypatch, "adam", "--role", "admin")
    researcher, admin = Client(), Client()
    assert researcher.login(username="rita", password=STRONG) and admin.login(username="adam", password=STRONG)
    assert researcher.get("/reports/").status_code == 200 and researcher.get("/llm/annotators/new/").status_code == 403
    assert admin.get("/llm/annotators/new/").status_code == 200 and admin.get("/escalation/").status_code == 200


def test_an_annotator_gets_its_languages_and_needs_them(monkeypatch) -> None:
    with pytest.raises(CommandError, match="an annotator needs at least one language code"):
        create(monkeypatch, "ann", "--role", "annotator", "--password-stdin", stdin=STRONG)
    create(monkeypatch, "ann", "--role", "annotator", "--languages", "eng-Latn,dan-Latn:fluent", "--password-stdin",
           stdin=STRONG)
    annotator = Annotator.objects.get(user__username="ann")
    assert annotator.language_codes() == {"eng-Latn", "dan-Latn"} and roles_of(annotator.user) == {"annotator"}
    assert logs_in("ann", STRONG)


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (["--role", "researcher", "--password-stdin"], "123\n", "password refused: This password is too short."),
    (["--role", "researcher", "--password-stdin"], "password\n", "password refused: This password is too common."),
    (["--role", "researcher", "--password-stdin"], "\n", "the password from standard input is empty"),
    (["--role", "researcher"], None, "no password: give it on standard input with --password-stdin, or in "
                                     "HUME_USER_PASSWORD"),
    (["--role", "admin", "--languages", "eng-Latn", "--password-stdin"], STRONG, "only annotators have languages"),
    (["--role", "annotator", "--languages", "english", "--password-stdin"], STRONG, "'english' is not an MTEB-style"),
])
def test_a_refusal_says_why_and_creates_nothing(monkeypatch, args, stdin, message) -> None:
    monkeypatch.delenv("HUME_USER_PASSWORD", raising=False)
    if stdin is None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: no prompt
    with pytest.raises(CommandError, match=message):
        create(monkeypatch, "erin", *args, stdin=stdin)
    assert not get_user_model().objects.filter(username="erin").exists()


def test_a_taken_name_is_refused_and_the_user_kept(monkeypatch, dave) -> None:
    with pytest.raises(CommandError, match="a user named 'dave' exists; nothing was changed"):
        create(monkeypatch, "dave", "--role", "admin", "--password-stdin", stdin=STRONG)
    dave.refresh_from_db()
    assert roles_of(get_user_model().objects.get(username="dave")) == {"researcher"} and not dave.is_staff


def test_the_password_is_never_an_argument() -> None:
    """Run as a deployment script would (a subprocess): there is no --password option to leak in `ps`."""
    env = {**os.environ, "DEBUG": "true"}
    result = subprocess.run([sys.executable, "manage.py", "create_user", "--help"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--password-stdin" in result.stdout and "--password " not in result.stdout
    assert "HUME_USER_PASSWORD" in result.stdout
