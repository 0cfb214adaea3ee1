"""Every password is checked the same way (annotation.core.annotators.check_password: Django's validators, knowing
the user name), whether an admin sets it on the page, through the API or with the create_annotator command;
a refused password creates nothing."""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.core.annotators import check_password, create_annotator
from annotation.models import Annotator

from .batch_helpers import fast_password_hashing  # noqa: F401

TOO_SHORT = "This password is too short. It must contain at least 8 characters."
NUMERIC = "This password is entirely numeric."
COMMON = "This password is too common."
LIKE_NAME = "The password is too similar to the username."


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def nothing_created(username: str) -> bool:
    return not get_user_model().objects.filter(username=username).exists() \
        and not Annotator.objects.filter(user__username=username).exists()


@pytest.mark.parametrize(("password", "message"), [("123", TOO_SHORT), ("123", NUMERIC), ("12345678", COMMON),
                                                   ("password", COMMON), ("hana-hansen", LIKE_NAME)])
def test_the_one_check_refuses_weak_passwords_with_the_validators_message(password: str, message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        check_password(password, username="hana-hansen")
    assert message in refused.value.messages


def test_a_weak_password_is_refused_by_the_api_and_nothing_is_created(carol) -> None:
    body = {"username": "hana", "password": "123", "agent": "human", "languages": [{"language": "eng-Latn"}]}
    response = client_for(carol).post("/api/v1/annotators/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["password"] == [TOO_SHORT, COMMON, NUMERIC]
    assert nothing_created("hana")


def test_a_password_like_the_user_name_is_refused_by_the_api(carol) -> None:
    body = {"username": "hana-hansen", "password": "hana-hansen", "agent": "human",
            "languages": [{"language": "eng-Latn"}]}
    response = client_for(carol).post("/api/v1/annotators/", body, content_type="application/json")
    assert (response.status_code, response.json()["password"]) == (400, [LIKE_NAME])
    assert nothing_created("hana-hansen")


def test_a_weak_password_is_refused_on_the_page_beside_the_field_and_nothing_is_created(carol) -> None:
    data = {"username": "hana", "password": "123", "agent": "human", "languages-TOTAL_FORMS": "1",
            "languages-INITIAL_FORMS": "0", "languages-MIN_NUM_FORMS": "0", "languages-MAX_NUM_FORMS": "1000",
            "languages-0-language": "eng-Latn", "languages-0-proficiency": "native"}
    response = client_for(carol).post("/manage/annotators/new/", data)
    assert response.status_code == 200
    assert response.context["form"].errors["password"] == [TOO_SHORT, COMMON, NUMERIC]
    assert TOO_SHORT in response.content.decode()
    assert nothing_created("hana")


def test_a_weak_password_stops_the_command_and_nothing_is_created(db) -> None:
    with pytest.raises(CommandError) as refused:
        call_command("create_annotator", "hana", "--languages", "eng-Latn", "--password", "123",
                     stdout=StringIO(), stderr=StringIO())
    assert str(refused.value) == f"--password: {TOO_SHORT} {COMMON} {NUMERIC}"
    assert nothing_created("hana")


def test_the_command_refuses_a_weak_new_password_for_an_existing_annotator(db) -> None:
    hana = create_annotator("hana", password="a-long-secret-9", languages={"eng-Latn": None})
    with pytest.raises(CommandError, match="too common"):
        call_command("create_annotator", "hana", "--languages", "dan-Latn", "--password", "password",
                     stdout=StringIO(), stderr=StringIO())
    hana.user.refresh_from_db()
    assert hana.user.check_password("a-long-secret-9")
    assert sorted(hana.language_codes()) == ["eng-Latn"]


def test_create_annotator_itself_refuses_a_weak_password(db) -> None:
    with pytest.raises(ValidationError, match="too short"):
        create_annotator("hana", password="123", languages={"eng-Latn": None})
    assert nothing_created("hana")


def test_createsuperuser_is_the_projects_which_validates_under_noinput() -> None:
    from django.core.management import get_commands
    assert get_commands()["createsuperuser"] == "hume"


@pytest.mark.parametrize(("password", "message"), [("123", TOO_SHORT), ("12345678", COMMON),
                                                   ("root-admin", LIKE_NAME)])
def test_createsuperuser_noinput_refuses_a_weak_password_and_creates_nothing(
        db, monkeypatch, password: str, message: str) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", password)
    with pytest.raises(CommandError) as refused:
        call_command("createsuperuser", "--noinput", username="root-admin", email="root@example.org",
                     stdout=StringIO())
    assert "DJANGO_SUPERUSER_PASSWORD refused" in str(refused.value) and message in str(refused.value)
    assert nothing_created("root-admin")


def test_createsuperuser_noinput_reads_the_name_from_the_environment_for_the_similarity_check(db, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "hana-hansen")
    monkeypatch.setenv("DJANGO_SUPERUSER_EMAIL", "hana@example.org")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "hana-hansen")
    with pytest.raises(CommandError, match="too similar to the username"):
        call_command("createsuperuser", "--noinput", stdout=StringIO())
    assert nothing_created("hana-hansen")


def test_createsuperuser_noinput_accepts_a_strong_password(db, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "correct-horse-battery")
    call_command("createsuperuser", "--noinput", username="root-admin", email="root@example.org",
                 stdout=StringIO())
    user = get_user_model().objects.get(username="root-admin")
    assert user.is_superuser and user.check_password("correct-horse-battery")
