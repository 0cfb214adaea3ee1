"""With the throttle's Redis gone, token-authenticated API calls still work (the throttle fails open, with a
logged warning) instead of answering 500; when Redis comes back the throttle counts again (issue 23, item 2).

The Redis here is the test's own (tests/throwaway_redis.py), stopped for real; the shared one is left alone."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Annotation
from tests.loop_data import batch_of
from tests.throwaway_redis import ThrowawayRedis

pytestmark = pytest.mark.django_db
ADDRESS = "203.0.113.23"


@pytest.fixture
def throttle_redis(settings: Any) -> Iterator[ThrowawayRedis]:
    redis = ThrowawayRedis()
    redis.start()
    caches = {name: dict(config) for name, config in settings.CACHES.items()}
    caches[settings.THROTTLE_CACHE]["LOCATION"] = redis.url
    settings.CACHES = caches  # pytest-django's setting_changed resets the cache connections
    try:
        yield redis
    finally:
        redis.stop()


def token_client(annotator: Any) -> APIClient:
    client = APIClient(REMOTE_ADDR=ADDRESS)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator.user).key}")
    return client


def test_with_redis_down_token_calls_answer_as_usual_and_log_a_warning(alice, throttle_redis, caplog) -> None:
    batch = batch_of("sts", [alice])
    client = token_client(alice)
    throttle_redis.stop()
    with caplog.at_level(logging.WARNING, logger="hume.lockout"):
        mine = client.get("/api/v1/my/batches/")
        assert mine.status_code == 200, mine.content
        assert [row["batch"]["id"] for row in mine.json()] == [batch.pk]
        item = client.get(f"/api/v1/batches/{batch.pk}/next/")
        assert item.status_code == 200, item.content
        item_id = item.json()["item"]["id"]
        answer = client.post(f"/api/v1/batches/{batch.pk}/items/{item_id}/answer/", {"value": 3.0}, format="json")
        assert answer.status_code == 201, answer.content
        bad = APIClient(REMOTE_ADDR=ADDRESS).get("/api/v1/my/batches/", HTTP_AUTHORIZATION="Token " + "0" * 40)
        assert bad.status_code == 401 and bad.json() == {"detail": "Invalid token."}
    assert Annotation.objects.get(item_id=item_id).value == 3.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("throttle not checked (cache unreachable" in w for w in warnings) == 1  # the bad token's
    assert any(f"failure from {ADDRESS} not counted" in w for w in warnings)


def test_when_redis_comes_back_failures_are_counted_again(alice, throttle_redis, settings) -> None:
    settings.API_AUTH_FAILURE_LIMIT = 3
    good = token_client(alice)
    throttle_redis.stop()
    bad = APIClient(REMOTE_ADDR=ADDRESS)
    down = [bad.get("/api/v1/my/batches/", HTTP_AUTHORIZATION=f"Token bad{i}").status_code for i in range(5)]
    assert down == [401] * 5  # not counted while Redis is down, and never a 500
    throttle_redis.start()
    up = [bad.get("/api/v1/my/batches/", HTTP_AUTHORIZATION=f"Token bad{i}").status_code for i in range(4)]
    assert up == [401, 401, 401, 429]
    assert bad.get("/api/v1/my/batches/", HTTP_AUTHORIZATION="Token bad9").status_code == 429
    assert good.get("/api/v1/my/batches/").status_code == 200  # a valid token is never throttled
