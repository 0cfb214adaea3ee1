"""Content-Security-Policy without a browser: the header on pages of every role (also with DEBUG off), and the
inline plot carrying no inline CSS the policy would block. tests/browser/test_csp_every_page.py checks in Chromium."""
from __future__ import annotations

import pytest
from django.test import Client

from measures.results import figure2
from tests.loop_data import batch_of

pytestmark = pytest.mark.django_db


def test_pages_of_every_role_carry_the_policy_also_with_debug_off(alice, carol, dave, settings) -> None:
    settings.DEBUG = False
    batch = batch_of("sts", [alice])
    pages = {alice.user: ["/", "/annotate/", f"/annotate/b/{batch.pk}/"], carol: ["/manage/", "/tasks/", "/llm/"],
             dave: ["/reports/", "/results/", f"/tasks/{batch.task_id}/"], None: ["/accounts/login/"]}
    for user, paths in pages.items():
        client = Client()
        if user:
            client.force_login(user)
        for path in paths:
            response = client.get(path, follow=True)
            policy = response.headers.get("Content-Security-Policy", "")
            assert response.status_code == 200, path
            assert "default-src 'self'" in policy and "script-src 'self'" in policy, path
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, path


def test_the_inline_plot_has_no_style_attribute_or_element() -> None:
    rows = [{"task": "STS12", "kind": "sts", "language": "eng-Latn", "human": 0.6, "min": 0.4, "max": 0.8,
             "median": 0.5, "models": [0.4, 0.5, 0.8], "scores": [0.4, 0.5, 0.8]}]
    svg = figure2.figure2_inline_svg(rows, title="Figure 2")
    assert svg.startswith('<svg role="img" aria-label="Figure 2" class="plot" stroke-linejoin="round"')
    assert ' style="' not in svg and "<style" not in svg
    assert 'font-family="\'DejaVu Sans\'"' in svg and 'fill="#ffffff"' in svg


def test_error_pages_carry_the_policy_the_disallowed_host_400_included(alice, settings) -> None:
    """Issue 23, item 9: DisallowedHost is raised in CommonMiddleware, so its 400 never passed the CSP
    middleware, which sat below it; the CSP middleware is now the outermost."""
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["hume.example.org"]
    client = Client(HTTP_HOST="hume.example.org")
    client.force_login(alice.user)
    strict = Client(enforce_csrf_checks=True, HTTP_HOST="hume.example.org")
    answers = {
        "disallowed host": Client().get("/", HTTP_HOST="evil.example"),
        "not found": client.get("/annotate/b/999999/"),
        "csrf refused": strict.post("/accounts/login/", {"username": "alice", "password": "x"}),
        "static file": client.get("/static/favicon.svg"),
    }
    assert {name: r.status_code for name, r in answers.items()} == {
        "disallowed host": 400, "not found": 404, "csrf refused": 403, "static file": 200}
    for name, response in answers.items():
        assert "default-src 'self'" in response.headers.get("Content-Security-Policy", ""), name
