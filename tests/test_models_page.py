"""The models page (/models/, issue 28 item 2) and the per-model "researchers may run" switch (issue 23):
who may see, register and start what, checked the same on the page, in the API and for SAGE."""
from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.test import Client

from agreement.model_runs.models import EmbeddingModel, ModelRun
from agreement.model_runs.shipped import minilm_folder
from tests import model_data as data

pytestmark = pytest.mark.django_db
KEY_VALUE = "sk-test-models-page-key-value"


@pytest.fixture(autouse=True)
def purge_queued_runs() -> Iterator[None]:
    """Runs started here are queued in the real broker; no worker runs them, and the next test must not."""
    yield
    from hume.lib.celery_app import app

    app.control.purge()


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def endpoint(monkeypatch: pytest.MonkeyPatch) -> EmbeddingModel:
    monkeypatch.setenv("PAGE_TEST_API_KEY", KEY_VALUE)
    return EmbeddingModel.objects.create(name="remote-bge", backend="openai", base_url="http://127.0.0.1:9/v1",
                                         model_id="bge-m3", api_key_env="PAGE_TEST_API_KEY", revision="r1")


def classical(metric: str) -> EmbeddingModel:
    call_command("add_model", metric, "--backend", "classical", "--metric", metric, stdout=io.StringIO())
    return EmbeddingModel.objects.get(name=metric)


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_the_switch_defaults_on_for_local_models_and_off_for_remote_endpoints(monkeypatch):
    assert classical("jaccard").researchers_may_run is True
    assert endpoint(monkeypatch).researchers_may_run is False
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    assert EmbeddingModel.objects.get(name="minilm").researchers_may_run is True
    explicit = EmbeddingModel.objects.create(name="paid-ok", backend="openai", base_url="http://127.0.0.1:9/v1",
                                             model_id="m", researchers_may_run=True)
    assert explicit.researchers_may_run is True  # an admin's explicit choice is kept


def test_an_annotator_gets_403_on_every_models_page_and_action(alice, monkeypatch):
    task = data.build_model_task("sts")
    model = classical("jaccard")
    client = logged_in(alice.user)
    for url in ("/models/", f"/models/{task.pk}/", f"/models/{task.pk}/rows/"):
        assert client.get(url).status_code == 403, url
    assert client.post("/models/register/", {"what": "metric", "metric": "rouge"}).status_code == 403
    assert client.post("/models/run/", {"task": task.pk, "models": [model.pk]}).status_code == 403
    assert client.post(f"/models/switch/{model.pk}/", {"on": "0"}).status_code == 403
    assert not ModelRun.objects.exists() and not EmbeddingModel.objects.filter(name="rouge").exists()
    assert EmbeddingModel.objects.get(pk=model.pk).researchers_may_run is True


def test_researchers_see_what_each_model_is_but_never_an_endpoints_url_or_key(dave, carol, monkeypatch):
    classical("tfidf")
    remote = endpoint(monkeypatch)
    page = logged_in(dave).get("/models/").content.decode()
    assert "classical metric: TF-IDF cosine (no vectors)" in page
    assert "remote /v1/embeddings endpoint, model id bge-m3" in page
    assert "127.0.0.1:9" not in page and "PAGE_TEST_API_KEY" not in page and KEY_VALUE not in page
    assert f"/models/switch/{remote.pk}/" not in page  # the switch is the admins'
    admin_page = logged_in(carol).get("/models/").content.decode()
    assert "<code>http://127.0.0.1:9/v1</code>" in admin_page  # read-only, for admins
    assert "key from the environment variable <code>PAGE_TEST_API_KEY</code>" in admin_page
    assert KEY_VALUE not in admin_page  # the key itself: never
    assert f'action="/models/switch/{remote.pk}/"' in admin_page
    listed = {m["name"]: m for m in logged_in(dave).get("/api/v1/models/").json()}
    assert listed["remote-bge"]["researchers_may_run"] is False and listed["tfidf"]["researchers_may_run"] is True
    assert "base_url" not in listed["remote-bge"] and "api_key_env" not in listed["remote-bge"]


def test_a_researcher_registers_every_classical_metric_and_a_folder_under_model_dirs(dave, settings):
    client = logged_in(dave)
    page = client.get("/models/").content.decode()
    for title in ("Levenshtein ratio", "ROUGE-L F1", "Jaccard similarity", "BM25 (Lucene variant)", "TF-IDF cosine"):
        assert title in page
    response = client.post("/models/register/", {"what": "metric", "metric": "bm25", "name": ""}, follow=True)
    assert messages_of(response) == ["bm25 is registered (classical metric: BM25 (Lucene variant) (no vectors))."]
    assert EmbeddingModel.objects.get(name="bm25").metric == "bm25"
    assert '<option value="bm25">' not in response.content.decode()  # registered: no longer offered
    # The shipped MiniLM unpacks into DATA_DIR/models, inside the default MODEL_DIRS: offered by its folder name.
    folder = minilm_folder()
    settings.MODEL_DIRS = [str(folder.parent)]
    page = client.get("/models/").content.decode()
    assert f'<option value="{folder.name}">{folder.name}</option>' in page and str(folder.parent) not in page
    response = client.post("/models/register/", {"what": "folder", "folder": folder.name, "name": "mini-folder"},
                           follow=True)
    model = EmbeddingModel.objects.get(name="mini-folder")
    assert (model.backend, model.dimensions, model.researchers_may_run) == ("sentence-transformers", 384, True)
    assert "mini-folder is registered (sentence-transformers folder, 384 dimensions)." in messages_of(response)


def test_a_folder_not_offered_or_an_endpoint_is_refused_without_naming_a_server_path(dave, settings, tmp_path):
    settings.MODEL_DIRS = [str(tmp_path)]
    (tmp_path / "empty-model").mkdir()  # no modules.json, no weights: not offered
    client = logged_in(dave)
    assert "empty-model" not in client.get("/models/").content.decode()
    for label in ("empty-model", "../../etc", "/etc"):
        response = client.post("/models/register/", {"what": "folder", "folder": label}, follow=True)
        (message,) = messages_of(response)
        assert message == (f"Nothing was registered: no model folder {label!r} under MODEL_DIRS holds a "
                           "sentence-transformers model")
        assert str(tmp_path) not in response.content.decode()
    response = client.post("/models/register/", {"what": "endpoint", "base_url": "http://x"}, follow=True)
    assert messages_of(response) == ["Nothing was registered: choose a model folder or a classical metric "
                                     "(endpoints are registered by an admin)"]
    assert not EmbeddingModel.objects.exists()


def test_a_researcher_starts_only_models_whose_switch_is_on_on_the_page_and_in_the_api(dave, carol, monkeypatch):
    task = data.build_model_task("sts")
    jaccard, remote = classical("jaccard"), endpoint(monkeypatch)
    client = logged_in(dave)
    response = client.post("/models/run/", {"task": task.pk, "models": [jaccard.pk, remote.pk]}, follow=True)
    assert messages_of(response) == ["Nothing was started: only an admin may start remote-bge (its 'researchers may "
                                     "run' switch is off)"]
    assert not ModelRun.objects.exists()  # all or nothing: jaccard was not started either
    task_page = client.get(f"/models/{task.pk}/").content.decode()
    assert f'value="{remote.pk}" disabled' in task_page and "(an admin starts it)" in task_page
    api = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["remote-bge"]}, content_type="application/json")
    assert api.status_code == 403 and "only an admin may start remote-bge" in api.json()["detail"]
    response = client.post("/models/run/", {"task": task.pk, "models": [jaccard.pk]}, follow=True)
    assert messages_of(response) == [f"1 model run(s) queued on {task.name}."]
    assert response.redirect_chain[-1][0] == f"/models/{task.pk}/"
    run = ModelRun.objects.get()
    assert (run.model.name, run.status, run.stage) == ("jaccard", "queued", "queued")  # for a worker, not run here
    assert 'id="model-rows"' in response.content.decode() and 'hx-trigger="every 2s"' in response.content.decode()
    # An admin turns the endpoint's switch on: now the researcher may start it (the API is asked; the
    # page's check is the same function).
    logged_in(carol).post(f"/models/switch/{remote.pk}/", {"on": "1"})
    assert EmbeddingModel.objects.get(pk=remote.pk).researchers_may_run is True
    api = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["remote-bge"]}, content_type="application/json")
    assert api.status_code == 202 and ModelRun.objects.filter(model=remote).count() == 1


def test_a_classical_metric_on_a_classification_task_starts_nothing_and_says_why(dave):
    task = data.build_model_task("classification")
    rouge = classical("rouge")
    response = logged_in(dave).post("/models/run/", {"task": task.pk, "models": [rouge.pk]}, follow=True)
    assert messages_of(response) == ["Nothing was started: rouge (classical rouge) cannot score a classification "
                                     "task: a classifier needs vectors, and a classical metric has none"]
    assert not ModelRun.objects.exists()
    page = logged_in(dave).get("/models/").content.decode()  # the page says so beforehand, from the registry
    assert "A classical metric cannot score a classification task (it has no vectors)" in page
    assert '<option value="mteb">MTEB\'s (every kind)</option><option value="pooled">pooled (classification only)' \
        '</option>' in page
    assert "Nothing was started: choose a task." in messages_of(
        logged_in(dave).post("/models/run/", {"task": "9" * 40, "models": [rouge.pk]}, follow=True))


def test_sage_refuses_a_model_a_researcher_may_not_start(dave, monkeypatch, settings):
    from pathlib import Path

    from agreement.sage.models import SageRun

    settings.SAGE_STUDIES_DIR = Path(__file__).parent
    endpoint(monkeypatch)
    client = logged_in(dave)
    page = client.get("/sage/").content.decode()
    assert 'value="remote-bge" disabled' in page
    response = client.post("/sage/", {"study": "sage_study", "models": ["remote-bge"]}, follow=True)
    assert messages_of(response) == ["Nothing was started: only an admin may start remote-bge (its 'researchers "
                                     "may run' switch is off)"]
    assert not SageRun.objects.exists()
