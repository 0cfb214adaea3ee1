"""Every page's top navigation per role, the favicon, and the 403/404 pages in the app's layout; a refusal is
logged as one line without a traceback (issue 14 item 11)."""
from __future__ import annotations

import io
import logging
import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from hume.logs import NoTracebackForPermissionDenied
from tests.batch_helpers import fast_password_hashing  # noqa: F401

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def sections(body: str) -> list[str]:
    nav = body.split('<nav aria-label="Sections">')[1].split("</nav>")[0]
    return re.findall(r'<a href="[^"]+"[^>]*>([^<]+)</a>', nav)


def test_each_role_sees_its_own_sections_and_a_logout_on_every_page(alice, carol, dave):
    assert sections(client_for(alice.user).get("/").content.decode()) == ["Annotate"]
    assert sections(client_for(carol).get("/").content.decode()) == [
        "Tasks", "Manage", "LLM", "Reports", "Results", "Models", "Retrieval", "SAGE", "Escalation",
        "Campaigns"]
    body = client_for(dave).get("/reports/").content.decode()
    assert sections(body) == ["Reports", "Results", "Models", "Retrieval", "SAGE", "Escalation", "Campaigns"]
    assert 'action="/accounts/logout/"' in body and ">Log out</button>" in body


def test_every_section_of_the_bar_opens_for_its_role(alice, carol, dave):
    for user in (alice.user, carol, dave):
        client = client_for(user)
        nav = client.get("/").content.decode().split('<nav aria-label="Sections">')[1].split("</nav>")[0]
        for url in re.findall(r'<a href="([^"]+)"', nav):
            assert client.get(url, follow=True).status_code == 200, (user.username, url)


def test_the_current_section_is_marked(dave):
    body = client_for(dave).get("/models/").content.decode()
    assert '<a href="/models/" aria-current="page">Models</a>' in body
    assert '<a href="/results/" aria-current="page">' not in body
    body = client_for(dave).get("/results/models/").content.decode()  # the imported MTEB models: Results
    assert '<a href="/results/" aria-current="page">Results</a>' in body


def test_every_page_links_the_svg_favicon(dave):
    body = client_for(dave).get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in body
    with open(finders.find("favicon.svg"), encoding="utf-8") as svg:
        assert svg.read().startswith("<svg xmlns=\"http://www.w3.org/2000/svg\"")


def test_a_refused_page_says_why_and_what_to_do_in_the_apps_layout(alice):
    response = client_for(alice.user).get("/manage/batches/")
    body = response.content.decode()
    assert response.status_code == 403
    assert "<h1>You may not open this page</h1>" in body
    assert "<p>Only admins and researchers can open the management pages.</p>" in body  # the refusal's own reason
    assert "ask an admin of this project" in body and '<a href="/">Go to your start page</a>' in body
    assert sections(body) == ["Annotate"] and 'href="/static/css/app.css"' in body


def test_a_missing_page_says_what_to_do_in_the_apps_layout(dave, settings):
    settings.DEBUG = False
    response = client_for(dave).get("/reports/no-such-page/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in body and "<code>/reports/no-such-page/</code>" in body
    assert '<a href="/">Go to your start page</a>' in body and sections(body)[0] == "Reports"


@pytest.fixture
def console_log():
    """What the configured console handler (settings.LOGGING) prints, read from a buffer."""
    handler = next(h for h in logging.getLogger().handlers
                   if any(isinstance(f, NoTracebackForPermissionDenied) for f in h.filters))
    buffer = io.StringIO()
    old = handler.setStream(buffer)
    yield buffer
    handler.setStream(old)


def test_a_refusal_is_logged_once_without_a_traceback(alice, console_log):
    client_for(alice.user).get("/manage/batches/")
    lines = console_log.getvalue().splitlines()
    assert lines == ["Forbidden (Permission denied): /manage/batches/"]


def test_a_django_request_line_reaches_one_handler_only(console_log):
    """Django's own console handler (DEBUG only) used to print every django.* line a second time."""
    reached, logger = [], logging.getLogger("django.request")
    while logger is not None:
        reached += [h for h in logger.handlers if not type(h).__module__.startswith("_pytest")]
        logger = logger.parent if logger.propagate else None
    assert len(reached) == 1 and reached[0].stream is console_log


def test_the_browsers_default_favicon_address_leads_to_the_svg(client):
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/favicon.svg")
