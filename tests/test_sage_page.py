"""The researchers' SAGE page (/sage/): a worker computes the study, the page shows the CLI's Table 1."""
from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path

from django.core.management import call_command
from django.test import Client, override_settings

from agreement.sage.models import SageRun
from agreement.sage.study_jobs import execute
from tests.conftest import require_postgres

TESTS = Path(__file__).parent
STUDY = TESTS / "sage_study"


def cli_rows(*metrics: str) -> dict[str, list[str]]:
    """Table 1 as the `sage` command prints it in CSV: name -> the five categories and the overall."""
    out = io.StringIO()
    call_command("sage", "run", "--datasets", str(STUDY), "--metrics", ",".join(metrics), "--format", "csv",
                 stdout=out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    return {r[0]: [v or "–" for v in r[2:]] for r in rows[1:]}


def cli_subtables(*metrics: str) -> dict[tuple[str, str, str], str]:
    """`sage run --format csv --subtables`: (category, model, key) -> value."""
    out = io.StringIO()
    call_command("sage", "run", "--datasets", str(STUDY), "--metrics", ",".join(metrics), "--format", "csv",
                 "--subtables", stdout=out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))[1:]
    return {(c, m, k): v or "–" for c, m, k, v in rows}


def page_subtables(html: str) -> dict[tuple[str, str, str], str]:
    found = {}
    for category, table in re.findall(r'<table class="scores" data-category="(.*?)">(.*?)</table>', html, re.S):
        names = re.findall(r'<th class="num">(.*?)</th>', table.split("</thead>")[0])
        for key, cells in re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table, re.S):
            for name, value in zip(names, re.findall(r'<td class="num">(.*?)</td>', cells), strict=True):
                found[(category, name, key.replace(" · ", "."))] = value  # the page joins keys with " · "
    return found


def page_rows(html: str) -> dict[str, list[str]]:
    table = re.search(r'<table class="scores" id="sage-table1">(.*?)</table>', html, re.S).group(1)
    rows = {}
    for name, cells in re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table, re.S):
        rows[name] = re.findall(r'<td class="num">(.*?)</td>', cells)
    return rows


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def stored_run(user, *metrics: str, status: str = SageRun.Status.QUEUED) -> SageRun:
    return SageRun.objects.create(study="sage_study", folder=str(STUDY), metrics=list(metrics), seed=0,
                                  created_by=user, status=status)


def test_only_researchers_and_admins_reach_the_sage_page(alice, dave, carol):
    assert logged_in(alice.user).get("/sage/").status_code == 403
    assert logged_in(dave).get("/sage/").status_code == 200
    assert logged_in(carol).get("/sage/").status_code == 200
    run = stored_run(dave, "jaccard")
    assert logged_in(alice.user).get(f"/sage/{run.pk}/").status_code == 403


def test_a_get_never_computes_it_says_being_computed_and_polls(dave):
    run = stored_run(dave, "jaccard")
    html = logged_in(dave).get(f"/sage/{run.pk}/").content.decode()
    assert "Being computed: queued" in html
    assert f'hx-get="/sage/{run.pk}/" hx-trigger="every 1s"' in html
    run.refresh_from_db()
    assert run.status == "queued" and run.table is None


def test_the_page_shows_the_cli_table_grouped_with_subtables_and_plots(dave):
    run = stored_run(dave, "levenshtein", "jaccard")
    assert execute(run.pk) == "done"
    assert execute(run.pk) == "taken"  # a second delivery of the message runs nothing
    client = logged_in(dave)
    partial = client.get(f"/sage/{run.pk}/", headers={"HX-Request": "true"})
    html = partial.content.decode()
    assert partial["Vary"] == "HX-Request" or "HX-Request" in partial["Vary"]
    assert "hx-trigger" not in html and "<h1>" not in html  # finished: the part stops polling
    assert page_rows(html) == cli_rows("levenshtein", "jaccard")
    headers = re.findall(r'<th class="num">(.*?)</th>', html.split('id="sage-table1"')[1].split("</thead>")[0])
    assert headers == ["Clustering", "Human Pref.", "Robustness", "Sensitivity", "Retrieval", "Overall"]
    assert "Other" not in headers
    assert '<tbody data-group="classical">' in html and "<em>Classical Metrics</em>" in html
    # Per-dataset subtables (Tables 2-6), number for number as the CLI prints them.
    subtables = page_subtables(html)
    assert subtables == cli_subtables("levenshtein", "jaccard")
    assert {c for c, _, _ in subtables} == {"human_preference", "robustness", "sensitivity", "clustering",
                                             "retrieval"}
    assert ("robustness", "Jaccard Similarity", "news.summary_over_semantic") in subtables
    run.refresh_from_db()
    svg = client.get(f"/sage/{run.pk}/robustness.svg")
    assert svg["Content-Type"] == "image/svg+xml"
    text = svg.content.decode()
    assert "Levenshtein Ratio" in text and f"{run.table['rows'][0]['scores']['robustness']:.3f}" in text
    assert client.get(f"/sage/{run.pk}/robustness.svg").content == svg.content  # same table, same bytes
    assert client.get(f"/sage/{run.pk}/other.svg").status_code == 404


@override_settings(SAGE_STUDIES_DIR=TESTS)
def test_an_unknown_study_or_no_scorer_starts_nothing(dave):
    client = logged_in(dave)
    page = client.post("/sage/", {"study": "../etc", "metrics": ["jaccard"]}, follow=True).content.decode()
    assert "Nothing was started: no study folder named &#x27;../etc&#x27;" in page
    page = client.post("/sage/", {"study": "sage_study", "metrics": ["nope"]}, follow=True).content.decode()
    assert "Nothing was started: unknown metric(s) nope" in page
    assert not SageRun.objects.exists()


@override_settings(SAGE_STUDIES_DIR=TESTS)
def test_a_seed_that_is_no_stored_integer_starts_nothing_and_says_why(dave):
    """Issue 23, item 7: a seed of 2**63 was stored into an integer column, a 500."""
    client = logged_in(dave)
    for seed, shown in ((str(2**63), str(2**63)), (str(2**31), str(2**31)), ("-1", "-1"), ("1e3", "1e3"),
                        ("9" * 5001, "9" * 20 + "…")):
        response = client.post("/sage/", {"study": "sage_study", "metrics": ["jaccard"], "seed": seed}, follow=True)
        assert response.status_code == 200
        assert (f"Nothing was started: seed: must be a whole number from 0 to 2147483647, got &#x27;{shown}&#x27;"
                in response.content.decode())
    assert not SageRun.objects.exists()
    client.post("/sage/", {"study": "sage_study", "metrics": ["jaccard"], "seed": str(2**31 - 1)})
    assert SageRun.objects.get().seed == 2**31 - 1


def test_a_real_worker_runs_the_study_asked_for_on_the_page(start_worker, dave):
    require_postgres()
    start_worker()
    client = logged_in(dave)
    with override_settings(SAGE_STUDIES_DIR=TESTS):
        assert "sage_study" in client.get("/sage/").content.decode()
        response = client.post("/sage/", {"study": "sage_study", "metrics": ["jaccard"], "seed": "0"})
    run = SageRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/sage/{run.pk}/"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if not run.pending:
            break
        time.sleep(0.5)
    assert run.status == "done", run.error
    assert page_rows(client.get(f"/sage/{run.pk}/").content.decode()) == cli_rows("jaccard")


def test_a_failed_run_shows_the_file_line_and_field(dave, tmp_path):
    (tmp_path / "clustering").mkdir()
    (tmp_path / "clustering" / "topics.jsonl").write_text('{"id": "s1", "texts": ["a", "b"]}\n', encoding="utf-8")
    run = SageRun.objects.create(study="broken", folder=str(tmp_path), metrics=["jaccard"], created_by=dave)
    assert execute(run.pk) == "failed"
    html = logged_in(dave).get(f"/sage/{run.pk}/").content.decode()
    assert "The run failed:" in html and "topics.jsonl:1: field" in html and "hx-trigger" not in html


def test_the_run_records_its_device_and_a_missing_gpu_fails_it_with_the_setting(dave, settings):
    """Issue 27: where a run's models ran is on its row and page; MODEL_DEVICE naming a GPU the worker lacks
    fails the run with the reason instead of running it elsewhere."""
    import torch

    run = stored_run(dave, "jaccard")
    assert execute(run.pk) == "done"
    assert SageRun.objects.get(pk=run.pk).device == "cpu"  # classical metrics alone: no model, the CPU
    assert "Computed on cpu." in logged_in(dave).get(f"/sage/{run.pk}/").content.decode()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    settings.MODEL_DEVICE = f"cuda:{torch.cuda.device_count()}" if torch.cuda.is_available() else "cuda"
    run = SageRun.objects.create(study="sage_study", folder=str(STUDY), model_names=["minilm"], seed=0,
                                 created_by=dave)
    assert execute(run.pk) == "failed"
    assert f"MODEL_DEVICE={settings.MODEL_DEVICE} but" in SageRun.objects.get(pk=run.pk).error
