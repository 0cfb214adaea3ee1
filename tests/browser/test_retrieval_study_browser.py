"""A retrieval study start to finish through pages only, in Chromium, with a live server and a real worker: the
researcher uploads a collection, starts a BM25 and a model run (the worker ranks; the runs table polls), imports
a TREC run, pools the runs, creates the judging batch with an LLM judge (a local scripted endpoint the worker
calls), an annotator judges her pairs in the ordinary loop, the researcher evaluates and the curves appear."""
from __future__ import annotations

import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from agreement.retrieval.models import Evaluation, PoolUnit, Ranking
from annotation.models import Annotation
from tests.browser.conftest import LAPTOP, log_in
from tests.browser.helpers import enter_and_wait, item_on_screen
from tests.llm_helpers import API_KEY_ENV, make_judge
from tests.llm_server import ChatServer, Seen
from tests.retrieval_helpers import MINIFACT, RUN_FILE

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
WORKER_WAIT_MS = 240_000  # the worker loads MiniLM on a shared, loaded machine


def english_archive(tmp_path: Path) -> Path:
    path = tmp_path / "minifact-en.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for member in sorted(p for p in (MINIFACT / "en").rglob("*") if p.is_file()):
            archive.write(member, f"minifact-en/{member.relative_to(MINIFACT / 'en').as_posix()}")
    return path


def english_ranking(tmp_path: Path) -> Path:
    """The fixture run's lines for the English queries (1, 3, 5, 7); its Danish lines name queries not uploaded."""
    path = tmp_path / "elsewhere.trec"
    lines = [line for line in RUN_FILE.read_text().splitlines() if line.split()[0] in {"1", "3", "5", "7"}]
    path.write_text("\n".join(lines) + "\n")
    return path


def judge_reply(seen: Seen) -> str:
    return json.dumps({"reasoning": "Scripted.", "score": 6.0})


def wait_for_run(page: Page, name: str) -> None:
    expect(page.locator(f'#rankings tr[data-ranking="{name}"]')).to_have_attribute("data-status", "done",
                                                                          timeout=WORKER_WAIT_MS)


def test_a_researcher_runs_a_retrieval_study_through_pages_only(
        start_worker, browser, logged_in_page, live_server, dave, alice, tmp_path, monkeypatch,
        local_llm_endpoints, screenshot) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-test-retrieval-study")
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    with ChatServer(content_for=judge_reply) as server:
        make_judge("judge-s", server.base_url, max_concurrency=2)  # an admin configured it on /llm/
        start_worker()
        page = logged_in_page("dave")
        refused: list[str] = []  # the app's CSP refuses inline style and script: none may be tried
        page.on("console", lambda message: refused.append(message.text)
                if "Content Security Policy" in message.text else None)
        page.goto(f"{live_server.url}/retrieval/")
        page.click("#upload-collection")
        page.fill("#id_name", "MiniFact")
        page.fill("#id_language", "eng-Latn")
        page.fill("#id_subset", "en")
        page.set_input_files("#id_archive", str(english_archive(tmp_path)))
        page.click("button[type=submit].primary")
        page.wait_for_url(f"{live_server.url}/retrieval/MiniFact/")
        expect(page.locator(".messages")).to_contain_text("documents: 10")

        page.fill("#id_bm25-k", "10")
        page.click("#bm25-form button[type=submit]")
        expect(page.locator('#rankings tr[data-ranking="bm25"]')).to_be_visible()
        page.select_option("#id_model-model", label="minilm (sentence-transformers)")
        page.fill("#id_model-k", "10")
        page.click("#model-ranking-form button[type=submit]")
        screenshot(page, "retrieval_study_runs_queued")
        wait_for_run(page, "bm25")  # the runs table polls itself while a worker ranks
        wait_for_run(page, "minilm")
        page.fill("#id_trec-name", "elsewhere")
        page.set_input_files("#id_trec-run_file", str(english_ranking(tmp_path)))
        page.click("#import-ranking-form button[type=submit]")
        expect(page.locator(".messages")).to_contain_text("ranking elsewhere on collection MiniFact: 4 queries")

        page.reload()
        for name in ("bm25", "elsewhere", "minilm"):
            page.get_by_label(name, exact=True).check()
        page.fill("#id_pool-depth", "2")
        page.click("#pool-form button[type=submit]")
        expect(page.locator(".messages")).to_contain_text("pool")
        units = PoolUnit.objects.count()
        assert units == len(set(Ranking.objects.get(name="bm25").entries.filter(rank__lte=2)
                                .values_list("query_id", "document_id"))
                            | set(Ranking.objects.get(name="minilm").entries.filter(rank__lte=2)
                                  .values_list("query_id", "document_id"))
                            | set(Ranking.objects.get(name="elsewhere").entries.filter(rank__lte=2)
                                  .values_list("query_id", "document_id")))
        form = page.locator(".judging-batch-form")
        form.locator("input[name$=overlap]").fill("2")  # alice and the judge each answer every pair
        form.locator("select[name$=judge]").select_option(label="judge-s")
        form.locator("button[type=submit]").click()
        expect(page.locator(".messages")).to_contain_text("for alice; LLM judge judge-s started")

        annotator = browser.new_context(viewport=LAPTOP)
        loop = annotator.new_page()
        log_in(loop, live_server.url, "alice")
        loop.locator(".batch-row", has_text="MiniFact en pool").locator("a.button").click()
        current = item_on_screen(loop)
        judged = 0
        while current is not None:
            loop.fill("ol.documents input[type=number]", "8")
            current = enter_and_wait(loop)
            judged += 1
        annotator.close()
        assert judged == units
        assert Annotation.objects.filter(annotator=alice).count() == units

        page.reload()
        expect(page.locator(".judge-run")).to_contain_text("LLM judge judge-s: done", timeout=WORKER_WAIT_MS)
        page.click("form[action$=\"/evaluate/\"] button[type=submit]")
        expect(page.locator(".messages")).to_contain_text("The evaluation is queued")
        for _ in range(120):
            if Evaluation.objects.get().status in ("done", "failed"):
                break
            page.wait_for_timeout(1000)
        assert Evaluation.objects.get().status == "done", Evaluation.objects.get().error
        page.reload()
    references = page.locator("#board thead th").all_inner_texts()
    assert references[1:] == ["humans", "judge:judge-s", "qrels:test"]
    assert sorted(page.locator("#board tbody th").all_inner_texts()) == ["bm25", "elsewhere", "minilm"]
    curves = page.locator("figure.plot svg")
    expect(curves).to_be_visible()
    box = curves.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100
    screenshot(page, "retrieval_study_curves")
    assert server.count == units  # one judge request per pair
    assert refused == []
