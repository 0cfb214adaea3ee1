"""Configuring LLM annotators and steering their runs: pages and API, who may do what, what is validated."""
from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.llm.models import LLMAnnotatorConfig, LLMRun
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotator
from tests.conftest import PASSWORD
from tests.llm_helpers import API_KEY_ENV, make_batch, make_judge, make_task
from tests.llm_server import ChatServer, Reply

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")  # the fake LLM servers listen on 127.0.0.1

FORM = {"name": "llm-gpt-mini", "base_url": "https://api.example.org/v1", "model": "gpt-4.1-mini",
        "api_key_env": "OPENAI_API_KEY", "temperature": "0", "max_concurrency": "4", "requests_per_minute": "60",
        "timeout_seconds": "60", "max_retries": "4", "max_answer_retries": "2", "json_mode": "on"}


def logged_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
def test_an_admin_creates_an_llm_annotator_whose_user_cannot_log_in(carol) -> None:
    response = logged_in(carol).post("/llm/annotators/new/", FORM)
    annotator = Annotator.objects.get(user__username="llm-gpt-mini")
    assert response.status_code == 302 and response["Location"] == f"/llm/annotators/{annotator.pk}/"
    assert annotator.agent == "llm" and not annotator.user.has_usable_password()
    config = annotator.llm_config
    assert (config.model, config.base_url, config.api_key_env, config.created_by) == (
        "gpt-4.1-mini", "https://api.example.org/v1", "OPENAI_API_KEY", carol)
    page = logged_in(carol).get(f"/llm/annotators/{annotator.pk}/").content.decode()
    assert "environment variable OPENAI_API_KEY" in page and "gpt-4.1-mini" in page


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://files.example.org/v1", "javascript:alert(1)",
                                 "http://user:secret@api.example.org/v1", "https://api.example.org/v1?key=abc",
                                 "not a url"])
def test_the_endpoint_url_must_be_plain_http_or_https(carol, url: str) -> None:
    response = logged_in(carol).post("/llm/annotators/new/", {**FORM, "base_url": url})
    assert response.status_code == 200
    assert "base_url" in response.context["form"].errors
    assert not Annotator.objects.filter(agent="llm").exists()
    assert api(carol).post("/api/v1/llm/annotators/", {**FORM, "base_url": url}).status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["DATABASE_URL", "SECRET_KEY", "openai_api_key", "REDIS_URL"])
def test_the_key_variable_must_be_an_api_key_variable(carol, name: str) -> None:
    response = logged_in(carol).post("/llm/annotators/new/", {**FORM, "api_key_env": name})
    assert "api_key_env" in response.context["form"].errors
    assert not LLMAnnotatorConfig.objects.exists()


@pytest.mark.django_db
def test_out_of_range_limits_are_refused_with_the_field_named(carol) -> None:
    response = logged_in(carol).post("/llm/annotators/new/", {**FORM, "temperature": "3", "max_concurrency": "0"})
    assert set(response.context["form"].errors) == {"temperature", "max_concurrency"}
    body = api(carol).post("/api/v1/llm/annotators/", {**FORM, "requests_per_minute": 0}, format="json").json()
    assert list(body) == ["requests_per_minute"]


@pytest.mark.django_db
@pytest.mark.parametrize("timeout", ["1e308", "3601", "1e999", "nan", "0"])
def test_a_timeout_without_a_deadline_is_refused_on_the_page_and_the_api(carol, timeout: str) -> None:
    """Issue 35, item 8: a timeout_seconds of 1e308 was stored (a request with no deadline); at most an hour."""
    response = logged_in(carol).post("/llm/annotators/new/", {**FORM, "timeout_seconds": timeout})
    assert response.status_code == 200 and list(response.context["form"].errors) == ["timeout_seconds"]
    body = api(carol).post("/api/v1/llm/annotators/", {**FORM, "timeout_seconds": timeout}, format="json")
    assert body.status_code == 400 and list(body.json()) == ["timeout_seconds"]
    assert not LLMAnnotatorConfig.objects.exists()
    config = make_judge("judge-t", "http://127.0.0.1:9/v1", timeout_seconds=3600)
    LLMAnnotatorConfig.objects.filter(pk=config.pk).update(timeout_seconds=3600)
    from django.db import IntegrityError, transaction
    with pytest.raises(IntegrityError, match="llm_timeout_bounded"), transaction.atomic():
        LLMAnnotatorConfig.objects.filter(pk=config.pk).update(timeout_seconds=1e308)


@pytest.mark.django_db
def test_only_admins_configure_and_only_researchers_read(alice, dave) -> None:
    judge = make_judge("judge-a", "http://127.0.0.1:9/v1")
    assert logged_in(dave).get("/llm/annotators/new/").status_code == 403
    assert logged_in(dave).get(f"/llm/annotators/{judge.annotator_id}/").status_code == 200
    assert api(dave).post("/api/v1/llm/annotators/", FORM, format="json").status_code == 403
    assert api(dave).get("/api/v1/llm/annotators/").json()["count"] == 1
    alice_user = alice.user
    assert logged_in(alice_user).get("/llm/").status_code == 403
    assert api(alice_user).get("/api/v1/llm/annotators/").status_code == 403
    assert api(alice_user).get("/api/v1/llm/runs/").status_code == 403


@pytest.mark.django_db
def test_a_secret_is_write_only_in_the_api_and_the_form(carol) -> None:
    secret = "sk-write-only-4242"
    created = api(carol).post("/api/v1/llm/annotators/", {**FORM, "api_key_env": "", "api_key_secret": secret},
                              format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert "api_key_secret" not in body and body["has_secret"] is True and body["key_source"] == "stored secret"
    config = LLMAnnotatorConfig.objects.get()
    assert config.api_key_secret == secret and config.resolve_api_key() == secret
    edit = logged_in(carol).get(f"/llm/annotators/{config.annotator_id}/edit/").content.decode()
    assert secret not in edit and "A secret is stored" in edit
    logged_in(carol).post(f"/llm/annotators/{config.annotator_id}/edit/", {**FORM, "api_key_env": "", "model": "m2"})
    config.refresh_from_db()
    assert (config.model, config.api_key_secret) == ("m2", secret)  # a blank box keeps the secret
    logged_in(carol).post(f"/llm/annotators/{config.annotator_id}/edit/",
                          {**FORM, "api_key_env": "", "clear_secret": "on"})
    config.refresh_from_db()
    assert config.api_key_secret == "" and config.key_source() == "none (the endpoint needs no key)"


@pytest.mark.django_db
def test_runs_are_started_paused_resumed_and_cancelled_through_the_api(carol, dave,
                                                                      django_capture_on_commit_callbacks) -> None:
    task, items, _ = make_task("sts", 3)
    batch = make_batch(task, items)
    judge = make_judge("judge-a", "http://127.0.0.1:9/v1")
    with django_capture_on_commit_callbacks() as enqueued:
        response = api(carol).post("/api/v1/llm/runs/", {"annotator": judge.annotator_id, "batch": batch.pk},
                                   format="json")
    assert response.status_code == 201, response.json()
    run_id = response.json()["id"]
    assert len(enqueued) == 1
    assert response.json()["status"] == "queued" and response.json()["prompt_version"] == "sts-v1"
    detail = api(dave).get(f"/api/v1/llm/runs/{run_id}/").json()
    assert detail["progress"] == {"total": 3, "answered": 0, "failed": 0, "in_flight": 0, "done": 0, "percent": 0}
    assert detail["stalled"] is False
    assert api(dave).post(f"/api/v1/llm/runs/{run_id}/pause/").status_code == 403
    paused = api(carol).post(f"/api/v1/llm/runs/{run_id}/pause/").json()
    assert (paused["status"], paused["paused"]) == ("queued", True)  # a hold, in the job layer's vocabulary
    with django_capture_on_commit_callbacks() as enqueued:
        resumed = api(carol).post(f"/api/v1/llm/runs/{run_id}/resume/").json()
    assert (resumed["status"], resumed["paused"]) == ("queued", False)
    assert len(enqueued) == 1
    assert api(carol).post(f"/api/v1/llm/runs/{run_id}/cancel/").json()["status"] == "cancelled"
    assert api(carol).post(f"/api/v1/llm/runs/{run_id}/resume/").status_code == 409
    both = api(carol).post("/api/v1/llm/runs/", {"annotator": judge.annotator_id, "batch": batch.pk,
                                                  "task": task.pk}, format="json")
    assert both.status_code == 400 and LLMRun.objects.count() == 1


@pytest.mark.django_db
def test_a_human_annotator_cannot_be_run_as_an_llm(carol, alice) -> None:
    task, _, _ = make_task("sts", 1)
    response = api(carol).post("/api/v1/llm/runs/", {"annotator": alice.pk, "task": task.pk}, format="json")
    assert response.status_code == 400 and "annotator" in response.json()


@pytest.mark.django_db
def test_the_run_page_shows_progress_and_escaped_raw_output_of_failures(carol, monkeypatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-page-1")
    task, _items, answers = make_task("sts", 2)
    hostile = '<script>alert("x")</script>'
    with ChatServer(answers, {"[m02]": [Reply(content=hostile), Reply(content=hostile)]}) as server:
        run = create_run(make_judge("judge-a", server.base_url).annotator, task=task)
        execute_run(run.pk)
    client = logged_in(carol)
    page = client.get(f"/llm/runs/{run.pk}/").content.decode()
    assert "2 of 2 items (100%): 1 answered" in page and "1 failed" in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page and hostile not in page
    fragment = client.get(f"/llm/runs/{run.pk}/", headers={"HX-Request": "true"})
    assert fragment.content.decode().lstrip().startswith('<section class="card" id="llm-run-progress"')
    assert "HX-Request" in fragment["Vary"]
    requests = api(carol).get(f"/api/v1/llm/runs/{run.pk}/requests/?status=failed").json()
    assert [r["raw_outputs"][0]["content"] for r in requests["results"]] == [hostile]
