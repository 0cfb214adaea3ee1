"""The login page, the admin and the health check answer; each role lands on its own home."""
import pytest
from django.test import Client

from tests.conftest import PASSWORD


@pytest.mark.django_db
def test_the_login_page_answers(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content


@pytest.mark.django_db
def test_home_sends_anonymous_visitors_to_log_in(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_the_admin_answers_for_a_superuser(client: Client, django_user_model) -> None:
    django_user_model.objects.create_superuser("root", "root@example.org", PASSWORD)
    client.login(username="root", password=PASSWORD)
    response = client.get("/admin/")
    assert response.status_code == 200
    for model in (b"Tasks", b"Items", b"Annotators", b"Batches", b"Annotations", b"Reports", b"Result models",
                  b"Result scores", b"Llm runs"):
        assert model in response.content, model
    for path in ("/admin/agreement/report/", "/admin/agreement/resultmodel/", "/admin/agreement/resultscore/",
                 "/admin/annotation/hold/", "/admin/annotation/llmrun/", "/admin/tasks_app/item/"):
        assert client.get(path).status_code == 200, path


@pytest.mark.django_db
def test_health_check_reports_the_database(client: Client) -> None:
    response = client.get("/healthz/")
    assert response.json()["status"] == "ok"


def test_an_admin_sees_the_management_links(client: Client, carol) -> None:
    client.login(username="carol", password=PASSWORD)
    body = client.get("/").content.decode()
    assert "Manage studies" in body
    assert "Agreement reports" in body


def test_a_researcher_sees_reports_but_not_management(client: Client, dave) -> None:
    client.login(username="dave", password=PASSWORD)
    body = client.get("/").content.decode()
    assert "Agreement reports" in body
    assert "Manage studies" not in body
