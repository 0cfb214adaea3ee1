"""Bad results are refused with a clear error through the CLI, the upload page and the API, importing nothing.

Each case is tried through all three doors with the same file; the database already holds a model, and
its row counts must be exactly what they were before.
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from agreement.results.models import ResultModel
from agreement.results.results_import import MAX_UPLOAD_BYTES, revision_counts

VALID = {"dataset_revision": "abc", "task_name": "HUMESTS12", "mteb_version": "1.34.7",
         "scores": {"test": [{"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]}]}}
MEMBER = "acme__model/r1/HUMESTS12.json"


def zip_of(tmp_path: Path, members: dict[str, bytes], name: str = "results.zip") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def with_valid_neighbour(bad: bytes) -> dict[str, bytes]:
    """A good file beside the bad one: the good one must not be imported either (all or nothing)."""
    return {"acme__model/r1/HUMESTS22.json": json.dumps({**VALID, "task_name": "HUMESTS22"}).encode(),
            MEMBER: bad}


def not_json(tmp_path: Path) -> Path:
    return zip_of(tmp_path, with_valid_neighbour(b"this is not JSON"))


def without_scores(tmp_path: Path) -> Path:
    return zip_of(tmp_path, with_valid_neighbour(json.dumps({k: v for k, v in VALID.items() if k != "scores"})
                                                 .encode()))


def subset_without_main_score(tmp_path: Path) -> Path:
    subset = {"map": 0.7, "hf_subset": "default", "languages": ["eng-Latn"]}
    return zip_of(tmp_path, with_valid_neighbour(json.dumps({**VALID, "scores": {"test": [subset]}}).encode()))


def a_5001_digit_integer(tmp_path: Path) -> Path:
    """Python refuses to parse an integer of more than 4300 digits with a bare ValueError (issue 23, item 7)."""
    text = json.dumps(VALID).replace('"mteb_version": "1.34.7"', '"mteb_version": ' + "7" * 5001)
    return zip_of(tmp_path, with_valid_neighbour(text.encode()))


def nested_100k_deep(tmp_path: Path) -> Path:
    """The decoder recurses once per level: RecursionError (issue 23, item 7)."""
    return zip_of(tmp_path, with_valid_neighbour(b"[" * 100_000 + b"]" * 100_000))


def path_traversal(tmp_path: Path) -> Path:
    return zip_of(tmp_path, {MEMBER: json.dumps(VALID).encode(), "../../escape/r1/HUMESTS12.json": b"{}"})


def huge_sparse_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.zip"
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # 200 MB, sparse: takes no disk space
    return path


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "not JSON": (not_json, f"results.zip!{MEMBER}: not valid JSON (line 1, column 1: Expecting value)"),
    "no scores": (without_scores, f"results.zip!{MEMBER}: scores: missing key (not an MTEB TaskResult)"),
    "no main_score": (subset_without_main_score,
                      f"results.zip!{MEMBER}: scores.test[0].main_score: missing key (found map, but main_score "
                      "is required)"),
    "5001-digit integer": (a_5001_digit_integer,
                           f"results.zip!{MEMBER}: mteb_version: a number of 5001 digits (line 1, column 71), over "
                           "the 4300-digit limit for integers"),
    "nested 100k deep": (nested_100k_deep, f"results.zip!{MEMBER}: invalid JSON: nested too deeply"),
    "path traversal": (path_traversal, "results.zip!../../escape/r1/HUMESTS12.json: unsafe member name "
                                       "(path traversal '..')"),
}


@pytest.fixture
def existing(db: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """One model already imported, and the row counts a refused import must leave as they are."""
    root = tmp_path_factory.mktemp("existing")
    path = root / "other__model" / "r0" / "HUMESTS12.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(VALID))
    call_command("import_results", str(root), stdout=StringIO())
    counts = dict(revision_counts())
    assert counts == {"models": 1, "revisions": 1, "scores": 1}
    return counts


def through_cli(path: Path, carol: Any) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("import_results", str(path))
    return str(caught.value)


def through_upload_page(path: Path, carol: Any) -> str:
    client = Client()
    client.force_login(carol)
    with path.open("rb") as handle:
        response = client.post("/results/import/", {"file": handle})
    assert response.status_code in (400, 413)
    assert "Nothing imported" in response.content.decode()
    return response.content.decode()


def through_api(path: Path, carol: Any) -> str:
    client = APIClient()
    client.force_authenticate(carol)
    with path.open("rb") as handle:
        response = client.post("/api/v1/results/import/", {"file": handle}, format="multipart")
    assert response.status_code in (400, 413)
    return json.dumps(response.json(), ensure_ascii=False)


DOORS = {"cli": through_cli, "upload page": through_upload_page, "api": through_api}


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("case", CASES)
def test_a_bad_file_is_refused_by_name_and_key_and_imports_nothing(tmp_path, existing, carol, door, case):
    make, expected = CASES[case]
    message = DOORS[door](make(tmp_path), carol)
    assert expected.replace("'", "&#x27;" if door == "upload page" else "'") in message
    assert dict(revision_counts()) == existing
    assert not ResultModel.objects.filter(name="acme/model").exists()


@pytest.mark.parametrize("door", DOORS)
def test_a_200_mb_upload_is_refused_before_it_is_read(tmp_path, existing, carol, door):
    message = DOORS[door](huge_sparse_file(tmp_path), carol)
    limit = f"over the {MAX_UPLOAD_BYTES}-byte upload limit"
    assert limit in message
    if door == "cli":
        assert "results.zip: file is 209715200 bytes" in message
    assert dict(revision_counts()) == existing


def test_a_200_mb_json_file_is_refused_by_the_cli(tmp_path, existing):
    path = tmp_path / "acme__model" / "r1" / "HUMESTS12.json"
    path.parent.mkdir(parents=True)
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(CommandError, match=r"HUMESTS12.json: file is 209715200 bytes, over the"):
        call_command("import_results", str(path))
    assert dict(revision_counts()) == existing


def test_a_folder_with_one_bad_file_imports_none_of_its_good_files(tmp_path, existing):
    for name, data in with_valid_neighbour(b'{"task_name": "HUMESTS12", "scores": []}').items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    with pytest.raises(CommandError, match=r"HUMESTS12.json: scores: expected a non-empty object of splits"):
        call_command("import_results", str(tmp_path))
    assert dict(revision_counts()) == existing


def test_a_name_too_long_for_the_database_is_an_import_error_not_a_crash(tmp_path, existing, carol):
    meta = json.dumps({"name": "acme/" + "x" * 400}).encode()
    path = zip_of(tmp_path, {MEMBER: json.dumps(VALID).encode(), "acme__model/r1/model_meta.json": meta})
    assert "model_name: longer than 300 characters" in through_api(path, carol)
    assert dict(revision_counts()) == existing


def test_one_json_upload_without_model_and_revision_is_refused(tmp_path, existing, carol):
    path = tmp_path / "HUMESTS12.json"
    path.write_text(json.dumps(VALID))
    assert "needs a model name and a revision" in through_api(path, carol)
    assert dict(revision_counts()) == existing


def test_an_archive_of_anything_else_says_no_task_result_was_found(tmp_path, existing, carol):
    path = zip_of(tmp_path, {"README.md": b"# hello"})
    assert "results.zip: no MTEB TaskResult found" in through_api(path, carol)


def test_only_admins_may_import(tmp_path, existing, dave, alice):
    path = zip_of(tmp_path, {MEMBER: json.dumps(VALID).encode()})
    for user in (dave, alice.user):
        client = APIClient()
        client.force_authenticate(user)
        with path.open("rb") as handle:
            assert client.post("/api/v1/results/import/", {"file": handle}, format="multipart").status_code == 403
        page = Client()
        page.force_login(user)
        assert page.get("/results/import/").status_code == 403
        with path.open("rb") as handle:
            assert page.post("/results/import/", {"file": handle}).status_code == 403
    assert dict(revision_counts()) == existing
