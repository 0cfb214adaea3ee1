"""Brute force: the login page locks an account from the address that failed too often (elsewhere it still logs
in), an admin unlocks it; the API answers a bad token 401 with a challenge and throttles an address that keeps
failing, never a valid token."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import caches
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD

ATTACKER = "203.0.113.7"  # TEST-NET-3: no other test sends from here


def login(client: Client, username: str, password: str, address: str = ATTACKER):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_thirty_one_wrong_logins_are_throttled_and_lock_out_the_right_password(client: Client, alice) -> None:
    answers = [login(client, "alice", f"guess-{i}").status_code for i in range(31)]
    limit = settings.AXES_FAILURE_LIMIT
    assert answers[:limit - 1] == [200] * (limit - 1)  # the form again, with its error
    assert answers[limit - 1:] == [429] * (32 - limit)
    locked = login(client, "alice", PASSWORD)
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content and b"an admin can unlock it" in locked.content
    assert "_auth_user_id" not in client.session
    # from another address the account still logs in: a stranger cannot lock it out everywhere (issue 23)
    assert login(Client(), "alice", PASSWORD, address="198.51.100.9").status_code == 302


def test_a_stranger_cannot_lock_the_admin_out_and_others_at_the_address_still_log_in(client: Client, carol,
                                                                                     bob) -> None:
    for i in range(3 * settings.AXES_FAILURE_LIMIT):
        login(client, "carol", f"guess-{i}")
    assert login(client, "carol", PASSWORD).status_code == 429  # the stranger's address is locked for carol
    assert login(Client(), "carol", PASSWORD, address="198.51.100.9").status_code == 302  # carol, elsewhere
    assert login(Client(), "bob", PASSWORD).status_code == 302  # someone else behind the stranger's address


def test_an_admin_unlocks_an_account(client: Client, alice) -> None:
    for i in range(settings.AXES_FAILURE_LIMIT):
        login(client, "alice", f"guess-{i}")
    assert login(client, "alice", PASSWORD).status_code == 429
    call_command("axes_reset_username", "alice")
    assert login(client, "alice", PASSWORD).status_code == 302


def test_the_admin_site_lists_the_attempts_to_unlock(client: Client, alice) -> None:
    for i in range(settings.AXES_FAILURE_LIMIT):
        login(client, "alice", f"guess-{i}")
    root = User.objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    page = client.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and b"alice" in page.content


@pytest.fixture
def clean_throttle() -> None:
    key = f"api-auth-failures:{ATTACKER}"
    caches[settings.THROTTLE_CACHE].delete(key)
    yield
    caches[settings.THROTTLE_CACHE].delete(key)


def test_a_bad_token_gets_401_with_a_challenge(client: Client, alice, clean_throttle) -> None:
    response = client.get("/api/v1/tasks/", HTTP_AUTHORIZATION="Token " + "0" * 40, REMOTE_ADDR=ATTACKER)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token'
    assert response.json() == {"detail": "Invalid token."}
    anonymous = client.get("/api/v1/tasks/")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"


def test_an_address_sending_bad_tokens_is_throttled_but_a_good_token_still_works(client: Client, alice,
                                                                                 clean_throttle) -> None:
    """Issue 23: the throttle refused valid tokens too, so one client locked out everyone behind its address."""
    good = Token.objects.create(user=alice.user).key
    limit = settings.API_AUTH_FAILURE_LIMIT
    answers = [client.get("/api/v1/tasks/", HTTP_AUTHORIZATION=f"Token bad{i}", REMOTE_ADDR=ATTACKER).status_code
               for i in range(limit + 1)]
    assert answers == [401] * limit + [429]
    refused = client.get("/api/v1/tasks/", HTTP_AUTHORIZATION="Token bad-again", REMOTE_ADDR=ATTACKER)
    assert refused.status_code == 429 and int(refused["Retry-After"]) == settings.API_AUTH_FAILURE_WINDOW
    assert "try again later" in refused.json()["detail"]
    # a valid token from the same address is served, and so are other addresses
    assert client.get("/api/v1/tasks/", HTTP_AUTHORIZATION=f"Token {good}", REMOTE_ADDR=ATTACKER).status_code != 429
    assert client.get("/api/v1/my/batches/", HTTP_AUTHORIZATION=f"Token {good}",
                      REMOTE_ADDR=ATTACKER).status_code == 200
    assert client.get("/api/v1/my/batches/", HTTP_AUTHORIZATION=f"Token {good}").status_code == 200


def test_behind_a_proxy_the_lock_follows_the_client_not_the_proxy(client: Client, alice, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    for i in range(settings.AXES_FAILURE_LIMIT):
        client.post("/accounts/login/", {"username": "alice", "password": f"guess-{i}"}, REMOTE_ADDR=proxy,
                    HTTP_X_FORWARDED_FOR=f"1.2.3.4, {ATTACKER}")  # the client wrote 1.2.3.4 itself
    other = Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD}, REMOTE_ADDR=proxy,
                          HTTP_X_FORWARDED_FOR="198.51.100.9")
    assert other.status_code == 302  # another client through the same proxy is not locked
    again = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD}, REMOTE_ADDR=proxy,
                        HTTP_X_FORWARDED_FOR=f"5.6.7.8, {ATTACKER}")
    assert again.status_code == 429
