"""The spend cap of a remote endpoint: an admin-set budget of HTTP requests (issue 23; annotation/llm/spend.py).

Against the real local servers the suite uses for /v1/chat/completions (tests/llm_server.py) and /v1/embeddings
(tests/embeddings_server.py), which record every request they receive: a run that reaches the cap stops with the
reason, and the server saw exactly the capped number of requests, also with several requests in flight."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.model_runs.embedding import embed
from agreement.model_runs.models import EmbeddingModel, ModelRun
from annotation.llm.models import LLMRun
from annotation.llm.run_control import create_run, resume_run
from annotation.llm.run_executor import execute_run
from annotation.llm.spend import SpendCapReached
from annotation.models import Annotation
from tests import model_data as data
from tests.embeddings_server import EmbeddingsServer
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer

# transaction=True: the cap is taken in the requests' own thread, on its own database connection
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_llm_endpoints")]


def run_until_settled(run: LLMRun) -> LLMRun:
    for _ in range(20):
        if execute_run(run.pk) != "continue":
            break
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("concurrency", [1, 4])
def test_an_llm_run_stops_at_its_endpoints_cap_having_sent_exactly_that_many_requests(
        monkeypatch: pytest.MonkeyPatch, concurrency: int) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-cap-1")
    task, _items, answers = make_task("sts", 8)
    with ChatServer(answers) as server:
        judge = make_judge("judge-capped", server.base_url, max_concurrency=concurrency, max_requests=3)
        run = run_until_settled(create_run(judge.annotator, task=task))
        assert len(server.seen) == 3  # nothing sent beyond the cap, with `concurrency` requests in flight
        assert run.status == LLMRun.Status.FAILED
        assert "spend cap reached: the LLM endpoint of judge-capped has been sent 3 HTTP requests, its cap " \
               "(max_requests = 3); nothing more was sent" in run.error
        judge.refresh_from_db()
        assert judge.requests_sent == 3 and run.http_requests == 3
        assert Annotation.objects.filter(annotator=judge.annotator).count() == 3

        judge.max_requests = 20  # the admin raises the cap; the run goes on where it stopped
        judge.save(update_fields=["max_requests"])
        assert resume_run(run)
        run = run_until_settled(run)
        assert run.status == LLMRun.Status.DONE, run.error
        assert len(server.seen) == 8  # the 3 answered items were not asked again
        judge.refresh_from_db()
        assert judge.requests_sent == 8
        assert Annotation.objects.filter(annotator=judge.annotator).count() == 8


def test_without_a_cap_nothing_is_counted_or_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-cap-2")
    task, _items, answers = make_task("sts", 4)
    with ChatServer(answers) as server:
        judge = make_judge("judge-free", server.base_url)
        run = run_until_settled(create_run(judge.annotator, task=task))
    assert run.status == LLMRun.Status.DONE and len(server.seen) == 4
    judge.refresh_from_db()
    assert judge.requests_sent == 0


def register(server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch, **fields: object) -> EmbeddingModel:
    monkeypatch.setenv("REMOTE_API_KEY", "sk-test-embed")
    call_command("add_model", "remote", "--backend", "openai", "--base-url", server.base_url, "--model-id",
                 "embed-small", "--api-key-env", "REMOTE_API_KEY", stdout=io.StringIO())
    EmbeddingModel.objects.filter(name="remote").update(max_retries=2, timeout_seconds=1.0, **fields)
    return EmbeddingModel.objects.get(name="remote")


def test_embeddings_stop_at_the_cap_retries_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.embeddings_server import Reply

    texts = [f"text number {i}" for i in range(7)]
    with EmbeddingsServer([Reply(status=500, body="busy")]) as server:  # the first try fails, the retry works
        model = register(server, monkeypatch, batch_size=2, max_requests=3)
        with pytest.raises(SpendCapReached, match=r"embeddings endpoint of model 'remote' has been sent 3 HTTP "
                                                  r"requests, its cap \(max_requests = 3\)"):
            embed(model, texts)
    assert len(server.seen) == 3  # the 500, its retry (batch 1), batch 2; batch 3 was never sent
    model.refresh_from_db()
    assert model.requests_sent == 3


def test_a_model_run_on_a_capped_endpoint_fails_with_the_reason_and_runs_once_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    task = data.build_model_task("sts")
    with EmbeddingsServer() as server:
        register(server, monkeypatch, batch_size=1, max_requests=2)
        with pytest.raises(CommandError, match="spend cap reached"):
            call_command("run_models", task.name, "--models", "remote", "--wait", stdout=io.StringIO())
        assert len(server.seen) == 2
        run = ModelRun.objects.get(model__name="remote")
        assert run.status == ModelRun.Status.FAILED and "spend cap reached" in run.error
        EmbeddingModel.objects.filter(name="remote").update(max_requests=None)
        call_command("run_models", task.name, "--models", "remote", "--wait", stdout=io.StringIO())
        assert ModelRun.objects.filter(model__name="remote", status=ModelRun.Status.DONE).exists()
