"""Importing MTEB results into the database: the HUME folder through the CLI, revisions, idempotence.

The folder is demo/mteb-hume-results (public MTEB results, CC0; see its README): 13 models and HUME's human
baseline (``baseline__Human``: two aggregate revisions and three ``annotator_<id>`` folders).
"""
from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from agreement.results.models import ResultModel, ResultRevision, ResultScore
from agreement.results.results_import import revision_counts, set_current, unpin_current
from tests.hume_paper import RESULTS


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def task_result(task: str = "HUMESTS12", subsets: list[dict[str, Any]] | None = None,
                version: str = "1.34.7") -> dict[str, Any]:
    return {"dataset_revision": "abc", "task_name": task, "mteb_version": version,
            "scores": {"test": subsets or [{"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]}]}}


def write_result(root: Path, model: str, revision: str, data: dict[str, Any]) -> Path:
    path = root / model / revision / f"{data['task_name']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.django_db
def test_the_hume_folder_imports_every_model_revision_and_subset():
    output = run("import_results", str(RESULTS))
    assert "14 model(s); 18 new revision(s); 456 score(s) added" in output
    assert revision_counts() == {"models": 14, "revisions": 18, "scores": 456}
    human = ResultModel.objects.get(name="baseline/Human")
    assert human.agent == ResultModel.Agent.HUMAN_REFERENCE
    assert ResultModel.objects.filter(agent=ResultModel.Agent.MODEL).count() == 13
    jasper = ResultModel.objects.get(name="NovaSearch/jasper_en_vision_language_v1")
    assert jasper.meta["reference"] == "https://huggingface.co/NovaSearch/jasper_en_vision_language_v1"


@pytest.mark.django_db
def test_a_human_baselines_annotator_folders_are_its_single_annotators_never_current():
    run("import_results", str(RESULTS))
    human = ResultModel.objects.get(name="baseline/Human")
    annotators = human.revisions.exclude(annotator_id="")
    assert annotators.count() == 3
    assert not annotators.filter(is_current=True).exists()
    assert sorted(rev.n_subsets for rev in annotators) == [4, 19, 19]
    # Two aggregate revisions with the same 26 subsets: v1.0 was run with the newer MTEB (1.34.7 > 1.18.0)
    current = human.revisions.get(is_current=True)
    assert (current.revision, current.n_subsets, current.mteb_version) == ("v1.0", 26, "1.34.7")


@pytest.mark.django_db
def test_importing_the_same_folder_twice_changes_nothing():
    run("import_results", str(RESULTS))
    before = list(ResultScore.objects.order_by("pk").values_list("pk", "main_score", "metrics"))
    output = run("import_results", str(RESULTS))
    assert "0 new revision(s); 0 score(s) added, 0 updated, 456 unchanged" in output
    assert list(ResultScore.objects.order_by("pk").values_list("pk", "main_score", "metrics")) == before


@pytest.mark.django_db
def test_norwegian_written_nor_latn_is_stored_as_nob_latn():
    run("import_results", str(RESULTS))
    score = ResultScore.objects.get(revision__model__name="intfloat/multilingual-e5-small",
                                    mteb_task_name="HUMEMultilingualSentimentClassification", hf_subset="nor")
    assert score.languages == ["nob-Latn"]


@pytest.mark.django_db
def test_paper_era_map_and_newer_map_at_1000_both_import_with_their_main_score(tmp_path):
    old = {"map": 0.71, "mrr": 0.8, "main_score": 0.71, "hf_subset": "en", "languages": ["eng-Latn"]}
    new = {"map_at_1000": 0.74, "main_score": 0.74, "hf_subset": "en", "languages": ["eng-Latn"]}
    write_result(tmp_path, "org__m", "r1", task_result("HUMEWikipediaRerankingMultilingual", [old], "1.12.0"))
    write_result(tmp_path, "org__m", "r2", task_result("HUMEWikipediaRerankingMultilingual", [new], "1.38.0"))
    run("import_results", str(tmp_path))
    scores = {s.revision.revision: s for s in ResultScore.objects.select_related("revision")}
    assert scores["r1"].main_score == 0.71 and scores["r1"].metrics == {"map": 0.71, "mrr": 0.8}
    assert scores["r2"].main_score == 0.74 and scores["r2"].metrics == {"map_at_1000": 0.74}
    # same completeness: the run with the newer MTEB version is current
    assert ResultRevision.objects.get(is_current=True).revision == "r2"


@pytest.mark.django_db
def test_several_revisions_are_kept_and_the_most_complete_is_current(tmp_path):
    write_result(tmp_path, "org__m", "2024_01_01", task_result("HUMESTS12"))
    write_result(tmp_path, "org__m", "2024_01_01", task_result("HUMESTS22"))
    write_result(tmp_path, "org__m", "2025_06_01", task_result("HUMESTS12", version="1.39.0"))
    run("import_results", str(tmp_path))
    model = ResultModel.objects.get(name="org/m")
    assert {(rev.revision, rev.n_subsets, rev.is_current) for rev in model.revisions.all()} == {
        ("2024_01_01", 2, True), ("2025_06_01", 1, False)}


@pytest.mark.django_db
def test_an_admins_current_revision_survives_reimport_until_unpinned(tmp_path):
    write_result(tmp_path, "org__m", "old", task_result("HUMESTS12", version="1.11.0"))
    write_result(tmp_path, "org__m", "new", task_result("HUMESTS12", version="1.30.0"))
    run("import_results", str(tmp_path))
    old = ResultRevision.objects.get(revision="old")
    set_current(old)
    run("import_results", str(tmp_path))
    assert ResultRevision.objects.get(is_current=True).revision == "old"
    assert ResultModel.objects.get(name="org/m").current_pinned
    assert unpin_current(old.model).revision == "new"
    assert ResultRevision.objects.get(is_current=True).revision == "new"


@pytest.mark.django_db
def test_a_reimport_with_a_corrected_score_updates_it_in_place(tmp_path):
    path = write_result(tmp_path, "org__m", "r", task_result("HUMESTS12"))
    run("import_results", str(tmp_path))
    data = json.loads(path.read_text())
    data["scores"]["test"][0]["main_score"] = 0.625
    path.write_text(json.dumps(data))
    output = run("import_results", str(tmp_path))
    assert "0 score(s) added, 1 updated" in output
    assert ResultScore.objects.get().main_score == 0.625 and ResultScore.objects.count() == 1


@pytest.mark.django_db
def test_one_json_file_imports_with_the_model_and_revision_given(tmp_path):
    path = tmp_path / "HUMESTS12.json"
    path.write_text(json.dumps(task_result("HUMESTS12")))
    run("import_results", str(path), "--model", "acme/embedder", "--revision", "v2")
    score = ResultScore.objects.select_related("revision__model").get()
    assert (score.revision.model.name, score.revision.revision, score.main_score) == ("acme/embedder", "v2", 0.5)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["zip", "gztar"])
def test_a_zip_or_tar_gz_of_the_folder_imports_the_same_rows(tmp_path, fmt):
    archive = shutil.make_archive(str(tmp_path / "results"), fmt, root_dir=RESULTS.parent, base_dir=RESULTS.name)
    output = run("import_results", archive)
    assert "14 model(s); 18 new revision(s); 456 score(s) added" in output
    assert ResultScore.objects.filter(revision__model__name="baseline/Human", revision__revision="v1.0").count() == 26


@pytest.mark.django_db
def test_the_api_imports_an_archive_and_answers_with_what_it_did(tmp_path, carol):
    from rest_framework.test import APIClient

    archive = shutil.make_archive(str(tmp_path / "results"), "zip", root_dir=RESULTS.parent, base_dir=RESULTS.name)
    client = APIClient()
    client.force_authenticate(carol)
    with open(archive, "rb") as handle:
        response = client.post("/api/v1/results/import/", {"file": handle}, format="multipart")
    assert response.status_code == 201
    body = response.json()
    assert (body["source"], len(body["models"]), body["revisions_created"], body["scores_created"]) == (
        "results.zip", 14, 18, 456)
    assert "baseline/Human" in body["models"]
