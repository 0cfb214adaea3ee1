"""A SAGE study uploaded from the page (/sage/, issue 28 item 2): a zip of the study folder, checked whole;
a bad file is refused with the file inside the archive, its line and field, and nothing is kept."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agreement.sage.models import SageRun

pytestmark = pytest.mark.django_db
STUDY = Path(__file__).parent / "sage_study"


def zipped(files: dict[str, str | bytes], name: str = "mystudy.zip") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, content in files.items():
            archive.writestr(member, content)
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")


def study_files(top: str = "") -> dict[str, str]:
    return {f"{top}{p.relative_to(STUDY).as_posix()}": p.read_text(encoding="utf-8")
            for p in sorted(STUDY.rglob("*")) if p.is_file()}


def upload(client: Client, archive: SimpleUploadedFile, name: str = "") -> list[str]:
    response = client.post("/sage/", {"action": "upload", "archive": archive, "name": name}, follow=True)
    assert response.status_code == 200
    return [str(m) for m in response.context["messages"]]


@pytest.fixture
def studies(settings, tmp_path) -> Path:
    settings.SAGE_STUDIES_DIR = tmp_path
    return tmp_path


@pytest.fixture
def client(dave) -> Client:
    client = Client()
    client.force_login(dave)
    return client


def test_a_zipped_study_folder_is_kept_offered_and_runs_like_the_command(client, studies):
    messages = upload(client, zipped(study_files(top="sage_study/")))  # zipping a folder: one top folder
    assert messages == ["Study 'mystudy' uploaded (Clustering, Robustness, Sensitivity, Retrieval, Human Pref.); "
                        "choose the metrics and models and start it."]
    assert sorted(p.name for p in studies.iterdir()) == ["mystudy"]  # no scratch folder left
    assert (studies / "mystudy" / "retrieval" / "mini" / "qrels" / "test.tsv").is_file()
    page = client.get("/sage/?study=mystudy").content.decode()
    assert '<option value="mystudy" selected>' in page
    for name in ("Levenshtein Ratio", "Jaccard Similarity", "ROUGE-L", "TF-IDF Cosine", "BM25"):
        assert f"> {name}</label>" in page  # every classical metric of the registry
    response = client.post("/sage/", {"study": "mystudy", "metrics": ["jaccard", "bm25"], "seed": "0"})
    run = SageRun.objects.get()
    assert response["Location"] == f"/sage/{run.pk}/" and run.folder == str(studies / "mystudy")


@pytest.mark.parametrize(("member", "content", "error"), [
    ("robustness/news.jsonl", '{"id": "a", "text": "A text.", "summary": "S."}\n{"id": "b", "text": "T."}\n',
     "mystudy/robustness/news.jsonl:2: field 'summary': must be a non-empty string"),
    ("clustering/topics.jsonl", '{"id": "s1", "texts": ["a", "b"], "labels": ["x"]}\n',
     "mystudy/clustering/topics.jsonl:1: field 'labels': must be a list of 2 labels, one per text"),
    ("human_preference/comparisons.jsonl", '{"id": "c", "source": "s", "summary_a": "a", "summary_b": "b", '
     '"preferred": "c"}\n', "mystudy/human_preference/comparisons.jsonl:1: field 'preferred': must be 'a', 'b' or "
     "'tie'"),
    ("sensitivity/essays.jsonl", "{not json\n", "mystudy/sensitivity/essays.jsonl:1: not valid JSON"),
    ("notes.txt", "no category folder", "mystudy: holds no SAGE dataset"),
])
def test_a_bad_study_file_is_refused_naming_the_file_line_and_field_and_nothing_is_kept(client, studies, member,
                                                                                      content, error):
    (message,) = upload(client, zipped({member: content}))
    assert message.startswith(f"Nothing was uploaded: {error}")
    assert str(studies) not in message  # the archive's own names, never the server's folders
    assert list(studies.iterdir()) == []


def test_a_bad_retrieval_qrels_line_names_the_file_and_line(client, studies):
    files = study_files()
    files["retrieval/mini/qrels/test.tsv"] += "q1\tnope\t1\n"
    (message,) = upload(client, zipped(files))
    lines = files["retrieval/mini/qrels/test.tsv"].count("\n")
    assert message == (f"Nothing was uploaded: mystudy/retrieval/mini/qrels/test.tsv:{lines}: field 'corpus-id': "
                       "'nope' is not in corpus.jsonl")
    assert list(studies.iterdir()) == []


def test_unsafe_or_broken_archives_and_bad_names_are_refused(client, studies):
    assert upload(client, SimpleUploadedFile("x.zip", b"not a zip")) == [
        "Nothing was uploaded: x.zip: not a zip archive (zip the study folder)"]
    assert upload(client, zipped({"../evil/robustness/a.jsonl": "{}"})) == [
        "Nothing was uploaded: mystudy.zip!../evil/robustness/a.jsonl: a file name outside the study folder"]
    assert upload(client, zipped({"/abs/robustness/a.jsonl": "{}"})) == [
        "Nothing was uploaded: mystudy.zip!/abs/robustness/a.jsonl: a file name outside the study folder"]
    assert upload(client, zipped(study_files()), name="../etc") == [
        "Nothing was uploaded: name: '../etc' must be 1-100 letters, digits, '-' or '_', starting with a letter or "
        "digit"]
    assert list(studies.iterdir()) == []
    upload(client, zipped(study_files()), name="one")
    assert upload(client, zipped(study_files()), name="one") == [
        "Nothing was uploaded: name: a study named 'one' exists; choose another name"]
    assert sorted(p.name for p in studies.iterdir()) == ["one"]


def test_an_annotator_cannot_upload(alice, studies):
    client = Client()
    client.force_login(alice.user)
    response = client.post("/sage/", {"action": "upload", "archive": zipped(study_files())})
    assert response.status_code == 403 and list(studies.iterdir()) == []


def test_a_file_with_a_byte_that_is_not_utf8_is_refused_naming_the_member_and_line(client, studies):
    """Issue 35, item 3: this was a 500 (UnicodeDecodeError) after the zip had been unpacked."""
    files: dict[str, str | bytes] = {**study_files()}
    files["robustness/news.jsonl"] = b'{"id": "a", "text": "A text.", "summary": "S."}\n{"id": "b", "text": "\xff"}\n'
    (message,) = upload(client, zipped(files))
    assert message == ("Nothing was uploaded: mystudy.zip!robustness/news.jsonl line 2: is not valid UTF-8: "
                       "byte offset 69 in the file (column 22 of the line, bytes ff 22 7d 0a); save the file as "
                       "UTF-8")
    assert list(studies.iterdir()) == []


def test_a_qrels_field_over_csvs_limit_is_read_and_refused_naming_the_line_cut_short(client, studies):
    """Issue 35, item 3: a field over 131,072 characters was a 500 (_csv.Error: field larger than field limit)."""
    files = study_files()
    files["retrieval/mini/qrels/test.tsv"] += "q" * 140_000 + "\td1\t1\n"
    (message,) = upload(client, zipped(files))
    lines = files["retrieval/mini/qrels/test.tsv"].count("\n")
    assert message == (f"Nothing was uploaded: mystudy/retrieval/mini/qrels/test.tsv:{lines}: field 'query-id': "
                       f"'{'q' * 40}…' is not in queries.jsonl")
    assert list(studies.iterdir()) == []


def bomb(line_bytes: int, member: str = "robustness/news.jsonl") -> SimpleUploadedFile:
    """A zip whose one member is one line of `line_bytes` bytes, written in 1 MiB pieces (deflate: ~1000 to 1)."""
    buffer = io.BytesIO()
    piece = b"a" * 2**20
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open(member, "w") as sink:
        for _ in range(line_bytes // 2**20):
            sink.write(piece)
    return SimpleUploadedFile("mystudy.zip", buffer.getvalue(), content_type="application/zip")


def test_a_small_zip_of_one_huge_line_is_refused_before_anything_is_written(client, studies):
    """Issue 35, item 4: a 463 KB zip holding one 450 MB line was accepted and stored (451 MB). Each member is
    streamed under the 16 MiB cap of collection and results archives, whatever its header says."""
    archive = bomb(450 * 2**20)
    assert len(archive) < 600_000
    (message,) = upload(client, archive)
    assert message == ("Nothing was uploaded: mystudy.zip!robustness/news.jsonl: member is 471859200 bytes, over the "
                       "16777216-byte limit")
    assert list(studies.iterdir()) == []


def test_a_line_over_the_import_line_limit_is_refused_naming_the_member_and_line(client, studies):
    """A 2 MiB line in a 2 MiB file (under the 16 MiB file cap): refused as dataset imports refuse it."""
    (message,) = upload(client, bomb(2 * 2**20))
    assert message == ("Nothing was uploaded: mystudy.zip!robustness/news.jsonl line 1: the line is longer than the "
                       "limit of 1,048,576 bytes (MAX_IMPORT_LINE_BYTES); it was not read")
    assert list(studies.iterdir()) == []
