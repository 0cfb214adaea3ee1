"""Reading MTEB results: the real HUME results folder, and every way a bad upload must be refused.

The folder is demo/mteb-hume-results (public MTEB results, CC0; see its README). No
database: these are plain functions over files.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from agreement.results.mteb_loading import (
    MAX_FILE_BYTES,
    load_results_archive,
    load_results_dir,
    load_task_result_file,
)
from measures.results.mteb_files import (
    ResultsImportError,
    ResultsImportErrors,
    annotator_rows,
    current_revisions,
    evaluation_rows,
    leaderboard_rows,
    preferred_split,
    version_key,
)
from tests.hume_paper import RESULTS

MINILM = "sentence-transformers__all-MiniLM-L6-v2/8b3219a92973c328a8e22fadcfa821b5dc75636a"


def task_result(
    task: str = "HUMESTS12", subsets: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    """A minimal valid TaskResult, as MTEB >= 1.11 writes it."""
    if subsets is None:
        subsets = [{"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]}]
    return {
        "dataset_revision": "abc",
        "task_name": task,
        "mteb_version": "1.34.7",
        "scores": {"test": subsets},
        "evaluation_time": 1.0,
        "kg_co2_emissions": None,
        **extra,
    }


def write_result(root: Path, relative: str, data: Any) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture(scope="module")
def hume_rows():
    return load_results_dir(RESULTS)


# --- the real HUME results folder ------------------------------------------------------------


def test_it_reads_every_task_subset_of_the_hume_results_folder(hume_rows):
    models = {row.model_name for row in hume_rows}
    assert len(models) == 14  # 13 embedding models (HUME Table 9) + baseline/Human
    assert "sentence-transformers/all-MiniLM-L6-v2" in models  # name from model_meta.json
    assert {row.split for row in hume_rows} == {"test"}
    # 12 models × 28 subsets (with fra) + embeddinggemma 26 + 2 human revisions × 26 + annotators
    assert len(hume_rows) == 12 * 28 + 26 + 2 * 26 + 42


def test_a_classification_row_keeps_main_score_metrics_and_provenance(hume_rows):
    row = next(
        r
        for r in hume_rows
        if r.model_name == "sentence-transformers/all-MiniLM-L6-v2"
        and r.mteb_task_name == "HUMEEmotionClassification"
    )
    assert row.main_score == pytest.approx(0.420833)
    assert row.metrics == {"accuracy": 0.420833, "f1": 0.414755, "f1_weighted": 0.414755}
    assert (row.split, row.hf_subset, row.languages) == ("test", "default", ["eng-Latn"])
    assert row.dataset_revision == "97b95feb5922dbcde62c7f12704b104e70ab9772"
    assert row.mteb_version == "1.34.7"
    assert row.revision == "8b3219a92973c328a8e22fadcfa821b5dc75636a"
    assert not row.is_human_reference and row.annotator_id is None
    assert row.source_path.endswith(f"{MINILM}/HUMEEmotionClassification.json")


def test_paper_era_reranking_keeps_map_as_a_metric(hume_rows):
    row = next(
        r
        for r in hume_rows
        if r.model_name == "sentence-transformers/all-MiniLM-L6-v2"
        and r.mteb_task_name == "HUMECore17InstructionReranking"
    )
    assert row.metrics["map"] == row.main_score == pytest.approx(0.955754)


def test_norwegian_subsets_are_nob_latn_in_every_file(hume_rows):
    languages = {lang for row in hume_rows for lang in row.languages}
    assert "nor-Latn" not in languages
    assert {"eng-Latn", "ara-Arab", "rus-Cyrl", "dan-Latn", "nob-Latn", "fra-Latn"} == languages


def test_the_human_baseline_is_v1_0_because_it_was_run_with_the_newer_mteb(hume_rows):
    # 2025_09_25 and v1.0 both cover the 26 subsets with the same main scores (data README);
    # v1.0 was produced by MTEB 1.34.7 with the models' dataset revisions, 2025_09_25 by 1.18.0
    # with the placeholder revision "human_evaluation", so v1.0 is the comparable one.
    assert current_revisions(hume_rows)["baseline/Human"] == "v1.0"

    def main_scores(revision: str) -> dict[tuple[str, str], float]:
        return {
            (r.mteb_task_name, r.languages[0]): r.main_score
            for r in hume_rows
            if r.model_name == "baseline/Human" and r.revision == revision
        }

    assert main_scores("v1.0") == main_scores("2025_09_25")
    assert len(main_scores("v1.0")) == 26


def test_the_human_aggregate_keeps_its_agreement_block(hume_rows):
    row = next(
        r
        for r in hume_rows
        if r.revision == "2025_09_25" and r.mteb_task_name == "HUMEEmotionClassification"
    )
    # HUME Table 8 / §4.3: EmotionClassification kappa = 0.39, 2 annotators, 48 items
    assert row.agreement is not None and row.agreement["metric"] == "fleiss_kappa"
    assert round(row.metrics["agreement.value"], 2) == 0.39
    assert row.metrics["agreement.n_annotators"] == 2
    assert row.metrics["agreement.n_items"] == 48


def test_annotator_folders_are_individual_humans_not_leaderboard_rows(hume_rows):
    annotators = annotator_rows(hume_rows)
    assert {row.annotator_id for row in annotators} == {
        "a7e82e0b-ad1c-450d-b9ff-7502e96815d6",
        "d215cdb8-cd38-4af5-8d35-3d237ddec07a",
        "fa668689-538c-4dc3-a9b4-b1ca70a237e9",
    }
    assert all(row.is_human_reference for row in annotators)
    competing = leaderboard_rows(hume_rows)
    assert all(row.annotator_id is None for row in competing)
    assert {r.revision for r in competing if r.is_human_reference} == {"v1.0"}
    # 12 models × 28 + embeddinggemma 26 + human 26
    assert len(competing) == 12 * 28 + 26 + 26


def test_a_single_file_takes_model_and_revision_from_its_path_or_arguments():
    path = RESULTS / MINILM / "HUMESTS22.json"
    rows = load_task_result_file(path)
    assert {r.model_name for r in rows} == {"sentence-transformers/all-MiniLM-L6-v2"}
    assert [r.hf_subset for r in rows] == ["en", "ar", "fr", "ru"]
    named = load_task_result_file(path, model_name="me/my-model", revision="r1")
    assert {(r.model_name, r.revision) for r in named} == {("me/my-model", "r1")}


def test_a_zip_of_a_results_folder_reads_like_the_folder(tmp_path, hume_rows):
    archive = tmp_path / "results.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((RESULTS / MINILM).iterdir()):
            zf.write(path, f"results/{MINILM}/{path.name}")
    from_zip = load_results_archive(archive)
    expected = [r for r in hume_rows if r.model_name == "sentence-transformers/all-MiniLM-L6-v2"]
    assert sorted((r.mteb_task_name, r.hf_subset, r.main_score) for r in from_zip) == sorted(
        (r.mteb_task_name, r.hf_subset, r.main_score) for r in expected
    )
    assert from_zip[0].source_path.startswith(f"{archive}!results/{MINILM}/")


# --- rules on synthetic results --------------------------------------------------------------


def test_nor_latn_is_normalized_to_nob_latn(tmp_path):
    subset = {"main_score": 0.7, "hf_subset": "no", "languages": ["nor-Latn"]}
    path = write_result(tmp_path, "org__m/r1/HUMESTS12.json", task_result(subsets=[subset]))
    (row,) = load_task_result_file(path)
    assert row.languages == ["nob-Latn"] and row.hf_subset == "no"


def test_newer_reranking_runs_with_map_at_1000_parse_by_their_main_score(tmp_path):
    subset = {
        "map_at_1000": 0.91,
        "main_score": 0.91,
        "hf_subset": "default",
        "languages": ["eng-Latn"],
    }
    data = task_result("HUMECore17InstructionReranking", [subset], mteb_version="1.38.33")
    (row,) = load_task_result_file(write_result(tmp_path, "org__m/r1/HUMECore17.json", data))
    assert row.main_score == 0.91 and row.metrics["map_at_1000"] == 0.91


def test_the_current_revision_is_the_most_complete_then_the_newest_mteb_run(tmp_path):
    two_subsets = [
        {"main_score": 0.5, "hf_subset": "en", "languages": ["eng-Latn"]},
        {"main_score": 0.6, "hf_subset": "ar", "languages": ["ara-Arab"]},
    ]
    write_result(tmp_path, "org__a/old/HUMESTS22.json", task_result("HUMESTS22", two_subsets))
    write_result(tmp_path, "org__a/new/HUMESTS22.json", task_result("HUMESTS22", two_subsets[:1]))
    write_result(tmp_path, "org__b/r1/HUMESTS12.json", task_result(mteb_version="1.34.7"))
    write_result(tmp_path, "org__b/r2/HUMESTS12.json", task_result(mteb_version="1.9.0"))
    write_result(tmp_path, "org__c/2024_01_02/HUMESTS12.json", task_result())
    write_result(tmp_path, "org__c/2025_01_01/HUMESTS12.json", task_result())
    rows = load_results_dir(tmp_path)
    assert current_revisions(rows) == {"org/a": "old", "org/b": "r1", "org/c": "2025_01_01"}
    assert {r.revision for r in leaderboard_rows(rows)} == {"old", "r1", "2025_01_01"}


def test_mteb_versions_compare_numerically():
    assert version_key("1.34.7") > version_key("1.18.0") > version_key("1.9.9") > version_key(None)


def test_comparisons_use_test_then_dev_then_validation():
    assert preferred_split(["validation", "dev", "test"]) == "test"
    assert preferred_split(["validation", "dev"]) == "dev"
    assert preferred_split(["validation", "train"]) == "validation"
    assert preferred_split(["train"]) == "train"
    assert preferred_split(["train", "other"]) is None


def test_only_the_preferred_split_is_kept_for_comparison(tmp_path):
    data = task_result()
    data["scores"]["validation"] = [
        {"main_score": 0.1, "hf_subset": "default", "languages": ["eng-Latn"]}
    ]
    rows = load_task_result_file(write_result(tmp_path, "org__m/r1/HUMESTS12.json", data))
    assert {r.split for r in rows} == {"test", "validation"}
    assert [(r.split, r.main_score) for r in evaluation_rows(rows)] == [("test", 0.5)]


# --- malformed input: one error type, naming the file and the key ----------------------------


def test_a_file_that_is_not_json_is_refused_with_its_name(tmp_path):
    path = write_result(tmp_path, "org__m/r1/HUMESTS12.json", "{not json")
    with pytest.raises(ResultsImportError, match="not valid JSON") as caught:
        load_task_result_file(path)
    assert str(path) in str(caught.value)


def test_a_task_result_without_scores_is_refused(tmp_path):
    data = task_result()
    del data["scores"]
    path = write_result(tmp_path, "org__m/r1/HUMESTS12.json", data)
    with pytest.raises(ResultsImportError) as caught:
        load_task_result_file(path)
    assert caught.value.key == "scores"
    assert f"{path}: scores: missing key" in str(caught.value)


def test_a_subset_without_main_score_is_refused_even_when_map_is_present(tmp_path):
    subset = {"map": 0.9, "hf_subset": "default", "languages": ["eng-Latn"]}
    data = task_result("HUMECore17InstructionReranking", [subset])
    path = write_result(tmp_path, "org__m/r1/HUMECore17InstructionReranking.json", data)
    with pytest.raises(ResultsImportError) as caught:
        load_task_result_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert "scores.test[0].main_score: missing key (found map" in message


def test_a_non_numeric_main_score_is_refused(tmp_path):
    subset = {"main_score": None, "hf_subset": "default", "languages": ["eng-Latn"]}
    path = write_result(tmp_path, "org__m/r1/HUMESTS12.json", task_result(subsets=[subset]))
    with pytest.raises(ResultsImportError, match=r"scores\.test\[0\]\.main_score: not a finite"):
        load_task_result_file(path)


def test_the_pre_1_11_layout_is_refused_with_a_pointer_to_the_format(tmp_path):
    data = task_result()
    data["scores"]["test"] = {"en": {"main_score": 0.5}}
    path = write_result(tmp_path, "org__m/r1/HUMESTS12.json", data)
    with pytest.raises(ResultsImportError, match=r"scores\.test: expected a list of subsets"):
        load_task_result_file(path)


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "org__m" / "r1" / "HUMESTS12.json"
    path.parent.mkdir(parents=True)
    with path.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk space, no memory
    with pytest.raises(ResultsImportError, match=f"over the {MAX_FILE_BYTES}-byte limit") as caught:
        load_task_result_file(path)
    assert str(path) in str(caught.value)


def test_a_folder_with_a_bad_file_imports_nothing_and_lists_every_problem(tmp_path):
    write_result(tmp_path, "org__m/r1/HUMESTS12.json", task_result())
    write_result(tmp_path, "org__m/r1/HUMESTS22.json", "[1, 2")
    write_result(tmp_path, "org__m/r1/HUMESICK-R.json", {"task_name": "HUMESICK-R"})
    with pytest.raises(ResultsImportErrors) as caught:
        load_results_dir(tmp_path)
    message = str(caught.value)
    assert "2 problem(s) found, nothing imported" in message
    assert "HUMESTS22.json: not valid JSON" in message
    assert "HUMESICK-R.json: scores: missing key" in message


def test_a_file_outside_the_model_revision_layout_is_refused(tmp_path):
    write_result(tmp_path, "r1/HUMESTS12.json", task_result())
    with pytest.raises(ResultsImportError, match="cannot tell model and revision"):
        load_results_dir(tmp_path)


# --- archives (uploads) ----------------------------------------------------------------------


def zip_bytes(members: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    buffer.seek(0)
    return buffer


def tar_bytes(members: list[tarfile.TarInfo], data: bytes = b"") -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for info in members:
            tf.addfile(info, io.BytesIO(data) if info.isfile() else None)
    buffer.seek(0)
    return buffer


GOOD = json.dumps(task_result()).encode()


def test_a_zip_upload_is_read_in_memory():
    archive = zip_bytes({"org__m/r1/HUMESTS12.json": GOOD, "org__m/r1/README.md": b"hi"})
    (row,) = load_results_archive(archive, name="upload.zip")
    assert (row.model_name, row.revision, row.source_path) == (
        "org/m",
        "r1",
        "upload.zip!org__m/r1/HUMESTS12.json",
    )


def test_a_tar_gz_upload_is_read_in_memory():
    info = tarfile.TarInfo("results/org__m/r1/HUMESTS12.json")
    info.size = len(GOOD)
    (row,) = load_results_archive(tar_bytes([info], GOOD), name="upload.tar.gz")
    assert (row.model_name, row.main_score) == ("org/m", 0.5)


@pytest.mark.parametrize("member", ["../org__m/r1/HUMESTS12.json", "org__m/../../r1/x.json"])
def test_a_zip_member_climbing_out_with_dotdot_is_refused(member):
    with pytest.raises(ResultsImportError, match=r"path traversal '\.\.'") as caught:
        load_results_archive(zip_bytes({member: GOOD}), name="upload.zip")
    assert f"upload.zip!{member}" in str(caught.value)


@pytest.mark.parametrize("member", ["/etc/org__m/r1/HUMESTS12.json", "C:/org__m/r1/x.json"])
def test_a_zip_member_with_an_absolute_name_is_refused(member):
    with pytest.raises(ResultsImportError, match="absolute path"):
        load_results_archive(zip_bytes({member: GOOD}), name="upload.zip")


def test_a_tar_member_climbing_out_with_dotdot_is_refused():
    info = tarfile.TarInfo("../../etc/org__m/r1/HUMESTS12.json")
    info.size = len(GOOD)
    with pytest.raises(ResultsImportError, match=r"path traversal") as caught:
        load_results_archive(tar_bytes([info], GOOD), name="upload.tar.gz")
    assert "upload.tar.gz!../../etc/org__m/r1/HUMESTS12.json" in str(caught.value)


def test_a_tar_symlink_is_refused():
    link = tarfile.TarInfo("org__m/r1/HUMESTS12.json")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    with pytest.raises(ResultsImportError, match="links are not allowed"):
        load_results_archive(tar_bytes([link]), name="upload.tar.gz")


def test_a_zip_symlink_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = zipfile.ZipInfo("org__m/r1/HUMESTS12.json")
        info.external_attr = 0o120777 << 16  # S_IFLNK
        zf.writestr(info, "/etc/passwd")
    buffer.seek(0)
    with pytest.raises(ResultsImportError, match="symbolic links are not allowed"):
        load_results_archive(buffer, name="upload.zip")


def test_an_archive_expanding_past_the_total_cap_is_refused():
    members = {f"org__m/r1/HUMESTS{i}.json": GOOD for i in range(5)}
    with pytest.raises(ResultsImportError, match="archive expands to more than"):
        load_results_archive(zip_bytes(members), name="upload.zip", max_total_bytes=3 * len(GOOD))


def test_an_oversized_archive_member_is_refused_by_its_declared_size():
    info = tarfile.TarInfo("org__m/r1/HUMESTS12.json")
    info.size = len(GOOD)
    with pytest.raises(ResultsImportError, match="member is .* bytes, over the 10-byte limit"):
        load_results_archive(tar_bytes([info], GOOD), name="upload.tar.gz", max_file_bytes=10)


def test_an_upload_that_is_no_archive_is_refused():
    with pytest.raises(ResultsImportError, match="not a zip or tar archive"):
        load_results_archive(io.BytesIO(b"just text"), name="upload.zip")


def test_a_bad_member_makes_the_whole_archive_import_nothing():
    archive = zip_bytes({"org__m/r1/HUMESTS12.json": GOOD, "org__m/r1/HUMESTS22.json": b"{"})
    with pytest.raises(ResultsImportError, match=r"upload\.zip!org__m/r1/HUMESTS22\.json"):
        load_results_archive(archive, name="upload.zip")
