"""Uploading a retrieval collection on the /retrieval/ page and through the API: the command's importer, its
line-naming errors and its atomicity, for researchers and admins."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agreement.retrieval.models import Collection, Document, Qrel, Query
from tests.retrieval_helpers import MINIFACT

pytestmark = pytest.mark.django_db

UPLOAD_URL = "/retrieval/upload/"
API_URL = "/api/v1/retrieval/collections/"


def zipped(folder: Path, *, top: str = "minifact-en", spoil: tuple[str, str] | None = None) -> SimpleUploadedFile:
    """The BEIR folder as a .zip under one top folder, optionally with its first `old` replaced by `new`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_text(encoding="utf-8")
            if spoil and path.name == "corpus.jsonl":
                data = data.replace(*spoil, 1)
            archive.writestr(f"{top}/{path.relative_to(folder).as_posix()}", data)
    return SimpleUploadedFile("minifact-en.zip", buffer.getvalue(), content_type="application/zip")


def files(folder: Path) -> dict[str, object]:
    return {"corpus": SimpleUploadedFile("corpus.jsonl", (folder / "corpus.jsonl").read_bytes()),
            "queries": SimpleUploadedFile("queries.jsonl", (folder / "queries.jsonl").read_bytes()),
            "qrels": [SimpleUploadedFile("test.tsv", (folder / "qrels" / "test.tsv").read_bytes())]}


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_uploads_a_zip_of_the_beir_layout_and_gets_the_collection(carol) -> None:
    client = logged_in(carol)
    response = client.post(UPLOAD_URL, {"name": "MiniFact", "language": "eng-Latn", "subset": "en",
                                        "archive": zipped(MINIFACT / "en")})
    assert response.status_code == 302 and response["Location"] == "/retrieval/MiniFact/"
    subset = Collection.objects.get(name="MiniFact").subsets.get()
    assert (subset.name, subset.language) == ("en", "eng-Latn")
    assert Document.objects.filter(subset=subset).count() == 10
    assert Query.objects.filter(subset=subset).count() == 4
    assert Qrel.objects.filter(subset=subset, split="test").count() == 5
    page = client.get("/retrieval/MiniFact/").content.decode()
    assert "documents: 10" in page and "qrels: test: 5" in page


def test_the_separate_files_make_a_second_subset_of_the_same_collection(carol) -> None:
    client = logged_in(carol)
    assert client.post(UPLOAD_URL, {"name": "MiniFact", "language": "eng-Latn", "subset": "en",
                                    "archive": zipped(MINIFACT / "en")}).status_code == 302
    response = client.post(UPLOAD_URL, {"name": "MiniFact", "language": "dan-Latn", "subset": "da",
                                        **files(MINIFACT / "da")})
    assert response.status_code == 302
    assert dict(Qrel.objects.filter(subset__name="da").values_list("document__doc_id", "relevance")) == {
        "d1": 2.0, "d2": 1.0, "d4": 2.0, "d3": 1.0}
    assert sorted(Collection.objects.get().subsets.values_list("name", flat=True)) == ["da", "en"]


def test_a_corpus_line_without_id_is_refused_with_file_and_line_and_nothing_changes(carol) -> None:
    spoiled = zipped(MINIFACT / "en", spoil=('{"_id": "7912", ', "{"))
    response = logged_in(carol).post(UPLOAD_URL, {"name": "MiniFact", "language": "eng-Latn", "archive": spoiled})
    assert response.status_code == 400
    assert 'corpus.jsonl line 3, field &quot;_id&quot;: is missing' in response.content.decode()
    assert not Collection.objects.exists() and not Document.objects.exists() and not Query.objects.exists()


def test_the_api_imports_the_files_and_answers_the_counts(carol) -> None:
    response = logged_in(carol).post(API_URL, {"name": "MiniFact", "language": "dan-Latn", "subset": "da",
                                               **files(MINIFACT / "da")})
    assert response.status_code == 201, response.content
    assert response.json() == {"collection": "MiniFact", "subset": "da", "language": "dan-Latn",
                               "created_collection": True, "documents": 6, "queries": 3, "qrels": {"test": 4}}
    assert Document.objects.filter(subset__name="da").count() == 6


def test_the_api_answers_a_bad_corpus_400_naming_file_line_and_field_and_changes_nothing(carol) -> None:
    upload = files(MINIFACT / "en")
    text = (MINIFACT / "en" / "corpus.jsonl").read_text(encoding="utf-8").replace('{"_id": "7912", ', "{", 1)
    upload["corpus"] = SimpleUploadedFile("corpus.jsonl", text.encode())
    response = logged_in(carol).post(API_URL, {"name": "MiniFact", "language": "eng-Latn", **upload})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"file": "corpus.jsonl", "line": 3, "field": "_id",
                                           "message": "is missing"}]}
    assert not Collection.objects.exists() and not Document.objects.exists()


def test_an_archive_without_a_corpus_is_refused_by_name(carol) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("queries.jsonl", '{"_id": "q1", "text": "x"}\n')
    response = logged_in(carol).post(API_URL, {"name": "X", "language": "eng-Latn",
                                               "archive": SimpleUploadedFile("x.zip", buffer.getvalue())})
    assert response.status_code == 400
    assert response.json()["errors"][0]["file"] == "x.zip"
    assert "no corpus.jsonl in the archive" in response.json()["errors"][0]["message"]
    assert not Collection.objects.exists()


def test_annotators_cannot_upload_and_researchers_can(alice, dave) -> None:
    client = logged_in(alice.user)
    assert client.get(UPLOAD_URL).status_code == 403
    assert client.post(UPLOAD_URL, {"name": "MiniFact", "language": "eng-Latn",
                                    "archive": zipped(MINIFACT / "en")}).status_code == 403
    assert client.post(API_URL, {"name": "MiniFact", "language": "eng-Latn",
                                 **files(MINIFACT / "en")}).status_code == 403
    assert not Collection.objects.exists()
    researcher = logged_in(dave)
    assert researcher.get("/retrieval/").content.decode().count('id="upload-collection"') == 1
    response = researcher.post(UPLOAD_URL, {"name": "MiniFact", "language": "eng-Latn", "subset": "en",
                                            "archive": zipped(MINIFACT / "en")})
    assert response.status_code == 302 and response["Location"] == "/retrieval/MiniFact/"
    assert Document.objects.count() == 10  # MiniFact's English corpus
    assert researcher.get(API_URL).status_code == 200  # researchers still read


def test_the_upload_help_shows_the_split_placeholder_as_text(carol) -> None:
    """Django renders a form's help text as HTML: an unescaped `<split>` was read as a tag and the page showed
    "qrels/.tsv" (issue 28)."""
    page = logged_in(carol).get(UPLOAD_URL).content.decode()
    assert page.count("qrels/&lt;split&gt;.tsv") == 2  # the page's own paragraph and the archive field's help
    assert "named &lt;split&gt;.tsv" in page
    assert "<split>" not in page
