"""The researcher's main pages at a laptop's 1366 px and a phone's 390 px (issue 28): the leaderboard, the
retrieval page with its curves, the reports list, the imported models and a finished SAGE study. At both
widths the page itself never scrolls sideways (a wide table scrolls inside its own box); at 1366 px no card
is wider than its box. Screenshots go to artifacts/screenshots/<page>-<width>.png (gitignored) to be looked at.
"""
from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings
from playwright.sync_api import Page

from agreement.retrieval.evaluations import run_evaluation
from agreement.retrieval.models import Evaluation, Ranking
from agreement.sage.models import SageRun
from agreement.sage.study_jobs import execute
from tests.hume_paper import RESULTS
from tests.retrieval_helpers import judged_collection

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STUDY = Path(__file__).resolve().parent.parent / "sage_study"
WIDTHS = (1366, 390)
OVERFLOW = """() => ({page: document.documentElement.scrollWidth - window.innerWidth,
  cards: [...document.querySelectorAll('.card')].filter(c => c.scrollWidth > c.clientWidth + 1)
    .map(c => `${c.id || c.className}: ${c.scrollWidth} > ${c.clientWidth}`)})"""


@pytest.fixture
def pages(transactional_db: None) -> dict[str, str]:
    """The demo with the HUME results, a judged and evaluated retrieval collection, a finished SAGE run."""
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=StringIO())
    call_command("import_results", str(RESULTS), stdout=StringIO())
    judged_collection()
    collection = Ranking.objects.first().collection_id
    Evaluation.objects.create(collection_id=collection)
    assert run_evaluation(collection, claimed_by="test") == "computed"
    from django.contrib.auth.models import User
    run = SageRun.objects.create(study="sage_study", folder=str(STUDY), metrics=["levenshtein", "jaccard"], seed=0,
                                 created_by=User.objects.get(username="dave"), status=SageRun.Status.QUEUED)
    assert execute(run.pk) == "done"
    return {"leaderboard": "/results/", "retrieval": "/retrieval/MiniFact/", "reports": "/reports/",
            "models": "/results/models/", "sage": f"/sage/{run.pk}/"}


def test_the_main_pages_fit_a_laptop_and_a_phone(pages: dict[str, str], logged_in_page: Callable[..., Page],
                                                  live_server, screenshot) -> None:
    page = logged_in_page("dave", "hume-demo")
    found = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in pages.items():
            response = page.goto(live_server.url + path)
            assert response is not None and response.status == 200, path
            page.wait_for_load_state("networkidle")
            overflow = page.evaluate(OVERFLOW)
            screenshot(page, f"{name}-{width}")
            if overflow["page"] > 0 or (width > 1000 and overflow["cards"]):
                found[f"{name} at {width}"] = overflow
    assert found == {}
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(live_server.url + "/results/")
    assert page.locator("#figure-1 svg.plot").is_visible()
    page.goto(live_server.url + "/retrieval/MiniFact/")
    assert page.locator("figure.plot svg").is_visible()
