"""GET /api/v1/ answers with where the documentation and schema are (issue 28: it was a 404)."""
import pytest
from django.test import Client


@pytest.mark.django_db
def test_the_api_root_links_its_documentation_and_schema(dave) -> None:
    response = Client().get("/api/v1/")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 1
    assert body["docs"] == "http://testserver/api/docs/" and body["schema"] == "http://testserver/api/schema/"
    assert "Authorization: Token <key>" in body["authentication"]
    assert Client().get(body["schema"]).status_code == 401  # the links are public; what they lead to is not
    researcher = Client()
    researcher.force_login(dave)
    assert researcher.get(body["schema"]).status_code == 200
