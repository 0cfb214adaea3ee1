"""The API key never leaves the worker's request header.

Two distinctive keys (one from an environment variable, one stored as a secret) go through everything:
configuration pages, runs on a real worker logging at DEBUG (with retries, a server that quotes the key
back, malformed answers), run pages, panels, Django admin, the API and its schema, dumpdata in three
formats. Then every page, response, log line and dump is searched for either key.
"""
from __future__ import annotations

import io
import logging
import time

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from agreement.tasks import refresh_judge_panel
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel, LLMRequest, LLMRun
from annotation.llm.run_progress import run_progress
from tests.conftest import PASSWORD, require_postgres
from tests.llm_helpers import API_KEY_ENV, make_batch, make_task
from tests.llm_server import ChatServer, Reply, malformed, throttled

ENV_KEY = "sk-DISTINCTIVE-env-Zq81xPv0"
SECRET_KEY = "sk-DISTINCTIVE-secret-Wm42kRt7"
FORM = {"model": "judge", "temperature": "0", "max_concurrency": "2", "requests_per_minute": "6000",
        "timeout_seconds": "2", "max_retries": "2", "max_answer_retries": "1", "json_mode": "on"}

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.usefixtures("local_llm_endpoints")]


def wait_for_runs(timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not LLMRun.objects.exclude(status__in=("done", "failed", "cancelled")).exists():
            return
        time.sleep(0.3)
    raise AssertionError("the runs did not finish")


def configure(carol: User, base_url: str) -> tuple[LLMAnnotatorConfig, LLMAnnotatorConfig]:
    """One annotator through the page with an environment variable, one through the API with a secret."""
    page = Client()
    page.login(username="carol", password=PASSWORD)
    page.post("/llm/annotators/new/", {**FORM, "name": "judge-env", "base_url": base_url, "api_key_env": API_KEY_ENV})
    api = APIClient()
    api.force_authenticate(carol)
    created = api.post("/api/v1/llm/annotators/", {**FORM, "name": "judge-secret", "base_url": base_url,
                                                   "api_key_secret": SECRET_KEY}, format="json")
    assert created.status_code == 201
    return (LLMAnnotatorConfig.objects.get(annotator__user__username="judge-env"),
            LLMAnnotatorConfig.objects.get(annotator__user__username="judge-secret"))


def everything_shown(carol: User, configs: tuple[LLMAnnotatorConfig, ...]) -> list[str]:
    """Every page, API response and dump a user or an operator could see."""
    page, admin, api = Client(), Client(), APIClient()
    page.login(username="carol", password=PASSWORD)
    admin.force_login(User.objects.create_superuser("root", password=PASSWORD))
    api.force_authenticate(carol)
    urls = ["/llm/", "/llm/panels/1/".replace("1", str(LLMJudgePanel.objects.get().pk))]
    for config in configs:
        urls += [f"/llm/annotators/{config.annotator_id}/", f"/llm/annotators/{config.annotator_id}/edit/"]
    urls += [f"/llm/runs/{run.pk}/" for run in LLMRun.objects.all()]
    admin_urls = ["/admin/annotation/llmannotatorconfig/", "/admin/annotation/llmrun/", "/admin/annotation/llmrequest/"]
    admin_urls += [f"/admin/annotation/llmannotatorconfig/{c.pk}/change/" for c in configs]
    admin_urls += [f"/admin/annotation/llmannotatorconfig/{c.pk}/history/" for c in configs]
    admin_urls += [f"/admin/annotation/llmrequest/{r.pk}/change/" for r in LLMRequest.objects.all()]
    api_urls = ["/api/v1/llm/annotators/", "/api/v1/llm/runs/", "/api/v1/llm/panels/", "/api/schema/"]
    api_urls += [f"/api/v1/llm/annotators/{c.annotator_id}/{fmt}" for c in configs for fmt in ("", "?format=api")]
    api_urls += [f"/api/v1/llm/runs/{run.pk}/requests/" for run in LLMRun.objects.all()]
    api_urls += [f"/api/v1/llm/runs/{run.pk}/" for run in LLMRun.objects.all()]
    shown = []
    for client, group in ((page, urls), (admin, admin_urls), (api, api_urls)):
        for url in group:
            response = client.get(url)
            assert response.status_code == 200, url
            shown.append(response.content.decode())
    for fmt in ("json", "xml", "jsonl"):
        out = io.StringIO()
        call_command("dumpdata", format=fmt, stdout=out)
        assert "judge-secret" in out.getvalue()
        shown.append(out.getvalue())
    shown += [repr(c) + str(c) for c in configs] + [repr(r) for r in LLMRun.objects.all()]
    return shown


def test_no_page_response_log_or_dump_contains_the_api_key(start_worker, carol, monkeypatch, caplog, capfd) -> None:
    require_postgres()
    monkeypatch.setenv(API_KEY_ENV, ENV_KEY)
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")
    caplog.set_level(logging.DEBUG)
    task, items, answers = make_task("sts", 3)
    batch = make_batch(task, items)
    # Runs execute one after the other on the worker; each consumes its share of the script.
    script = {"[m01]": [Reply(status=500, echo_authorization=True)] * 6,
              "[m02]": [throttled(1)] * 2 + [malformed()] * 2,
              "[m03]": [Reply(status=401, echo_authorization=True)] * 2}
    with ChatServer(answers, script) as server:
        configs = configure(carol, server.base_url)
        start_worker("--loglevel=DEBUG")
        api = APIClient()
        api.force_authenticate(carol)
        for config in configs:
            assert api.post("/api/v1/llm/runs/", {"annotator": config.annotator_id, "batch": batch.pk},
                            format="json").status_code == 201
        wait_for_runs()
        panel = api.post("/api/v1/llm/panels/", {"task": task.pk, "name": "keys",
                                                 "judges": [c.annotator_id for c in configs]}, format="json").json()
        refresh_judge_panel(panel["id"])
    assert {s.authorization for s in server.seen} == {f"Bearer {ENV_KEY}", f"Bearer {SECRET_KEY}"}
    assert any("[redacted]" in (r.raw_outputs[0].get("body") or "") for r in LLMRequest.objects.all())
    assert sum(run_progress(run).done for run in LLMRun.objects.all()) >= 2

    shown = everything_shown(carol, configs)
    worker_output = capfd.readouterr()
    logs = [worker_output.out, worker_output.err, caplog.text]
    assert "annotation.llm_run" in worker_output.err + worker_output.out  # the worker really logged at DEBUG
    for key in (ENV_KEY, SECRET_KEY, "DISTINCTIVE"):
        assert not [text[:200] for text in shown + logs if key in text]
