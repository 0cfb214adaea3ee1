"""SSRF: an LLM (or embedding) endpoint may only lead to a public address, checked when the URL is saved and
again when the connection is made; a failed reply is kept only as a bounded, labelled excerpt."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from annotation.llm.models import LLMAnnotatorConfig, LLMRequest
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotator
from hume.lib import endpoint_policy
from hume.lib.http_client import ChatClient, EndpointError, RateLimiter
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer, Reply

FORM = {"name": "llm-evil", "model": "m", "api_key_env": "OPENAI_API_KEY", "temperature": "0",
        "max_concurrency": "4", "requests_per_minute": "60", "timeout_seconds": "60", "max_retries": "4",
        "max_answer_retries": "2", "json_mode": "on"}
REDIS_PORT = settings.REDIS_URL.rsplit(":", 1)[1].split("/")[0]
REFUSED = [
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
    f"http://127.0.0.1:{REDIS_PORT}/",  # the app's own Redis
    "http://[::1]:8000/v1",  # IPv6 loopback
    "http://0.0.0.0:8000/v1",  # unspecified: the local host on Linux
    "http://2130706433/v1",  # 127.0.0.1 as one decimal number
    "http://0x7f000001/v1",  # ... in hex
    "http://127.1/v1",  # ... shortened
    "http://localhost:8000/v1",  # a host name that resolves to 127.0.0.1
    "http://[::ffff:127.0.0.1]/v1",  # IPv4-mapped IPv6
    "http://10.0.0.5/v1", "http://172.16.0.1/v1", "http://192.168.1.1/v1",  # private
    "http://100.64.0.1/v1",  # carrier-grade NAT (shared)
    "http://[fe80::1]/v1", "http://[fc00::1]/v1",  # IPv6 link-local and unique-local
    "http://224.0.0.1/v1", "http://240.0.0.1/v1",  # multicast, reserved
]


def test_localhost_really_resolves_to_loopback_here() -> None:
    assert "127.0.0.1" in endpoint_policy.resolve("localhost", 80)


@pytest.mark.parametrize("url", REFUSED)
def test_it_refuses_an_endpoint_leading_to_a_non_public_address(url: str) -> None:
    with pytest.raises(endpoint_policy.EndpointRefused, match="loopback, private, link-local or reserved"):
        endpoint_policy.check_url(url)


@pytest.mark.parametrize("url", ["http://api.example.org/v1 x", "http://api.example.org/v1\r\nX-Evil: 1",
                                 "http://api.example.org/\tv1", "http://api.example.org/v1\x00"])
def test_it_refuses_spaces_and_control_characters(url: str) -> None:
    with pytest.raises(endpoint_policy.EndpointRefused, match="spaces or control characters"):
        endpoint_policy.check_url(url)


def test_a_public_address_and_an_unresolvable_name_pass_the_save_time_check() -> None:
    endpoint_policy.check_url("https://8.8.8.8/v1")
    endpoint_policy.check_url("https://no-such-host.invalid/v1")  # the connect-time check still guards it


def test_the_allowed_networks_setting_lets_a_local_server_through(settings) -> None:
    settings.ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    endpoint_policy.check_url("http://localhost:8000/v1")
    with pytest.raises(endpoint_policy.EndpointRefused):
        endpoint_policy.check_url("http://169.254.169.254/")  # only the listed networks


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://2130706433/v1",
                                 "http://localhost:8000/v1", "http://[::1]:8000/v1"])
def test_the_page_and_the_api_refuse_the_url_and_store_nothing(url: str, carol) -> None:
    page = Client()
    page.force_login(carol)
    response = page.post("/llm/annotators/new/", {**FORM, "base_url": url})
    assert response.status_code == 200
    assert "loopback, private, link-local or reserved" in response.context["form"].errors["base_url"][0]
    api = APIClient()
    api.force_authenticate(carol)
    refused = api.post("/api/v1/llm/annotators/", {**FORM, "base_url": url}, format="json")
    assert refused.status_code == 400 and "loopback" in refused.json()["base_url"][0]
    assert not LLMAnnotatorConfig.objects.exists() and not Annotator.objects.filter(agent="llm").exists()


def test_the_connection_is_checked_again_when_it_is_made() -> None:
    """DNS rebinding: whatever the URL said when it was saved, the socket only connects to an allowed address."""
    with ChatServer({"[m01]": 1}) as server, pytest.raises(EndpointError) as refused:
        ChatClient(server.base_url, None, timeout=2, max_retries=3, limiter=RateLimiter(6000)).complete(
            {"model": "m", "messages": [{"role": "user", "content": "[m01]"}]})
    assert refused.value.fatal and refused.value.attempts == 1
    assert "refused to connect to 127.0.0.1" in str(refused.value)
    assert server.count == 0
    with pytest.raises(endpoint_policy.EndpointRefused):
        endpoint_policy.guarded_connection(("localhost", 9))


@pytest.mark.django_db
def test_a_run_whose_saved_endpoint_now_leads_inside_stops_without_sending(settings, monkeypatch) -> None:
    settings.ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    monkeypatch.setenv(API_KEY_ENV, "sk-test")
    task, _, answers = make_task("sts", 2)
    with ChatServer(answers) as server:
        judge = make_judge("judge-a", server.base_url)
        settings.ENDPOINT_ALLOWED_NETWORKS = []  # as if the name now resolved to loopback
        run = create_run(judge.annotator, task=task)
        execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "refused to connect to 127.0.0.1" in run.error
    assert server.count == 0


@pytest.mark.django_db
def test_a_failed_reply_is_kept_only_as_a_labelled_excerpt(settings, monkeypatch) -> None:
    settings.ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    monkeypatch.setenv(API_KEY_ENV, "sk-test")
    task, _, answers = make_task("sts", 1)
    internal = "SECRET-INTERNAL-PAGE " * 5000  # 105,000 characters
    with ChatServer(answers, script={"[m01]": [Reply(status=500, body=internal)] * 3}) as server:
        run = create_run(make_judge("judge-a", server.base_url).annotator, task=task)
        verdict = execute_run(run.pk)
    run.refresh_from_db()
    assert (verdict, run.status, server.count) == ("done", "failed", 3)  # not one answer: failed (issue 28)
    assert len(run.error) < 400 and run.error.count("SECRET-INTERNAL-PAGE") <= 1
    body = LLMRequest.objects.get().raw_outputs[0]["body"]
    assert len(body) < 1200 and body.startswith("SECRET-INTERNAL-PAGE")
    assert body.endswith(f"[excerpt: the first 1000 of {len(internal)} characters of the endpoint's reply]")


def test_the_guarded_connection_reaches_an_allowed_address(settings) -> None:
    settings.ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    with ChatServer({"[m01]": 2}) as server:
        port = int(server.base_url.split(":")[2].split("/")[0])
        sock = endpoint_policy.guarded_connection(("localhost", port), timeout=2)
        assert sock.getpeername()[0] in {"127.0.0.1", "::1"}
        sock.close()
