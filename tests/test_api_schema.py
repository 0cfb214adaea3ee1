"""The OpenAPI schema the app serves is valid and generates without warnings."""
import pytest
from django.core.management import call_command
from django.test import Client


def test_the_openapi_schema_validates_without_warnings(tmp_path) -> None:
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(out), "--validate", "--fail-on-warn")
    text = out.read_text()
    for path in ("/api/v1/batches/{batch_id}/next/", "/api/v1/tasks/import/", "/api/v1/results/import/"):
        assert path in text


@pytest.mark.django_db
def test_the_schema_is_served_to_logged_in_users(client: Client, dave) -> None:
    client.force_login(dave)
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"HUME annotation platform API" in response.content


@pytest.mark.django_db
def test_anonymous_requests_get_neither_schema_nor_docs(client: Client) -> None:
    schema = client.get("/api/schema/")
    assert (schema.status_code, schema["WWW-Authenticate"]) == (401, "Token")
    assert b"HUME annotation platform API" not in schema.content
    docs = client.get("/api/docs/")
    assert (docs.status_code, docs["Location"]) == (302, "/accounts/login/?next=/api/docs/")


@pytest.mark.django_db
def test_the_schema_is_served_to_token_holders(client: Client, dave) -> None:
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=dave)
    response = client.get("/api/schema/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    assert b"HUME annotation platform API" in response.content
