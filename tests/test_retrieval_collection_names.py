"""A collection's name is part of its page's address (/retrieval/<name>/), so a name that cannot be one ("a/b")
is refused where names come in (the upload page, the API, the import_collection command) with an error naming
the field, and a bad row that is already stored does not take the collections page down (issue 23, item 6)."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from agreement.retrieval.models import Collection, Document
from tests.retrieval_helpers import MINIFACT
from tests.test_retrieval_upload import API_URL, UPLOAD_URL, files, logged_in, zipped

pytestmark = pytest.mark.django_db
SLASH = "A collection name cannot contain &#x27;/&#x27; (it is part of the page&#x27;s address)."


def test_the_upload_page_refuses_a_name_with_a_slash_beside_the_field(carol) -> None:
    response = logged_in(carol).post(UPLOAD_URL, {"name": "a/b", "language": "eng-Latn",
                                                  "archive": zipped(MINIFACT / "en")})
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == [
        "A collection name cannot contain '/' (it is part of the page's address)."]
    assert SLASH in response.content.decode()
    assert not Collection.objects.exists() and not Document.objects.exists()


@pytest.mark.parametrize(("name", "message"), [
    ("a/b", "cannot contain '/'"), ("a\\b", "cannot contain '\\\\'"), ("..", "cannot be blank, \".\" or \"..\""),
    ("tab\there", "cannot contain '\\t'")])
def test_the_api_refuses_a_bad_name_naming_the_field(carol, name: str, message: str) -> None:
    response = logged_in(carol).post(API_URL, {"name": name, "language": "eng-Latn", **files(MINIFACT / "en")})
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert (error["file"], error["field"]) == ("upload", "name") and message in error["message"]
    assert not Collection.objects.exists()


def test_the_command_refuses_a_name_with_a_slash_naming_the_option() -> None:
    with pytest.raises(CommandError) as refused:
        call_command("import_collection", str(MINIFACT / "en"), name="a/b", language="eng-Latn", stdout=StringIO())
    assert 'en, option "name": A collection name cannot contain \'/\'' in str(refused.value)
    assert not Collection.objects.exists() and not Document.objects.exists()


def test_a_bad_name_already_stored_leaves_the_collections_page_working(dave) -> None:
    Collection.objects.create(name="a/b")  # stored before names were checked
    Collection.objects.create(name="SciFact")
    client = Client()
    client.force_login(dave)
    page = client.get("/retrieval/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<a href="/retrieval/SciFact/">SciFact</a>' in html
    assert '<span dir="auto">a/b</span> <span class="muted">(no page: the name cannot be part of an address' in html
    assert client.get("/retrieval/a/b/").status_code == 404
