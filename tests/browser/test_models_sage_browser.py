"""In a real browser, through pages only, with a real worker (issue 28 item 2): a researcher uploads a SAGE
study, picks metrics, starts it and reads the finished Table 1; and starts a model run on a task from
/models/ and sees its row finish."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command

from agreement.model_runs.models import ModelRun
from agreement.sage.models import SageRun
from tests import model_data as data
from tests.conftest import require_postgres

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
STUDY = Path(__file__).parent.parent / "sage_study"
WIDE, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}


def study_zip(target: Path) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(STUDY.rglob("*")):
            if path.is_file():
                archive.write(path, f"browserstudy/{path.relative_to(STUDY).as_posix()}")
    target.write_bytes(buffer.getvalue())
    return target


def test_a_researcher_uploads_a_sage_study_starts_it_and_reads_table_1(start_worker, logged_in_page, live_server,
                                                                       dave, settings, tmp_path, screenshot):
    require_postgres()
    settings.SAGE_STUDIES_DIR = tmp_path / "studies"
    start_worker()
    page = logged_in_page("dave")
    page.goto(f"{live_server.url}/sage/")
    page.set_input_files("#upload input[name=archive]", str(study_zip(tmp_path / "browserstudy.zip")))
    page.click("#upload button[type=submit]")
    page.wait_for_url("**/sage/?study=browserstudy#run")
    assert "Study 'browserstudy' uploaded" in page.inner_text(".messages")
    assert page.locator("#sage-study").input_value() == "browserstudy"
    page.check("#sage-metrics input[value=jaccard]")
    page.check("#sage-metrics input[value=tfidf]")
    page.set_viewport_size(WIDE)
    screenshot(page, "sage-index-1366")
    page.click("#run button[type=submit]")
    page.wait_for_selector("#sage-table1", timeout=120_000)  # the part polls until the worker stored the table
    rows = page.locator("#sage-table1 tbody tr th[scope=row]").all_inner_texts()
    assert rows == ["Jaccard Similarity", "TF-IDF Cosine"]
    run = SageRun.objects.get()
    assert (run.study, run.status, run.metrics) == ("browserstudy", "done", ["jaccard", "tfidf"])
    jaccard = run.table["rows"][0]
    cells = page.locator("#sage-table1 tbody tr", has_text="Jaccard Similarity").locator("td").all_inner_texts()
    assert cells[-1] == f"{jaccard['overall']:.3f}"  # the page shows the worker's table
    page.locator("figure img").first.wait_for()
    screenshot(page, "sage-run-1366")
    page.set_viewport_size(PHONE)
    screenshot(page, "sage-run-390")


def test_a_researcher_starts_a_model_run_from_the_models_page_and_sees_its_row(start_worker, logged_in_page,
                                                                               live_server, dave, screenshot):
    require_postgres()
    call_command("add_model", "jaccard", "--backend", "classical", "--metric", "jaccard", stdout=io.StringIO())
    task = data.build_model_task("sts", name="STS for the models page")
    start_worker()
    page = logged_in_page("dave")
    page.set_viewport_size(WIDE)
    page.click("nav >> text=Models")
    page.wait_for_url(f"{live_server.url}/models/")
    assert "classical metric: Jaccard similarity (no vectors)" in page.inner_text("#registry")
    screenshot(page, "models-index-1366")
    page.select_option("#run-task", str(task.pk))
    page.check("#run-models input[name=models]")
    page.click("#run-models button[type=submit]")
    page.wait_for_url(f"{live_server.url}/models/{task.pk}/")
    row = page.locator("#model-rows tbody tr", has_text="jaccard")
    row.locator("td", has_text="done").wait_for(timeout=120_000)  # the rows poll until the worker scored it
    run = ModelRun.objects.get()
    assert run.status == "done"
    gold = run.scores["gold"]["main_score"]
    assert row.locator("td.num").first.inner_text().startswith(f"{gold:.3f}")
    screenshot(page, "models-task-1366")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/models/")
    screenshot(page, "models-index-390")
