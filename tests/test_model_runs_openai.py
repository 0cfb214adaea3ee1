"""The `openai` backend against a real local /v1/embeddings server (tests/embeddings_server.py): batching,
order, retries on 429 (Retry-After) and 500, a slow reply, a trickling reply, replies that must be refused, and
the attempt limit of a run's chunks."""
from __future__ import annotations

import io
import json
import time

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy import stats

from agreement.model_runs.backends import load_backend
from agreement.model_runs.embedding import embed
from agreement.model_runs.execution import claim_chunk, execute_chunk, run_in_process, start_run
from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice, ModelRun
from hume.jobs.recovery import lapsed_keys
from hume.jobs.registry import TYPES
from hume.lib.http_client import EndpointError
from tests import model_data as data
from tests.embeddings_server import EmbeddingsServer, Reply, throttled, vector_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_llm_endpoints")]
KEY = "sk-test-0123456789abcdef"
TEXTS = ["alpha one", "beta two", "gamma three", "delta four", "epsilon five", "zeta six", "eta seven"]


def register(server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch, **options: object) -> EmbeddingModel:
    monkeypatch.setenv("REMOTE_API_KEY", KEY)
    args = ["remote", "--backend", "openai", "--base-url", server.base_url, "--model-id", "embed-small",
            "--api-key-env", "REMOTE_API_KEY"] + [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
    call_command("add_model", *args, stdout=io.StringIO())
    model = EmbeddingModel.objects.get(name="remote")
    model.max_retries, model.timeout_seconds = 2, 1.0
    model.save()
    return model


def test_it_embeds_in_batches_in_input_order_with_the_key_only_in_the_header(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddingsServer([Reply(reverse=True)]) as server:
        model = register(server, monkeypatch, batch_size=3)
        vectors = embed(model, TEXTS)
    assert [len(s.body["input"]) for s in server.seen] == [3, 3, 1]
    assert {s.authorization for s in server.seen} == {f"Bearer {KEY}"}
    np.testing.assert_allclose(vectors, np.array([vector_for(t) for t in TEXTS], dtype=np.float32))
    model.refresh_from_db()
    assert model.dimensions == 8 and KEY not in json.dumps(model.describe())


def test_it_waits_out_a_429_and_retries_a_500(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddingsServer([throttled(0.3), Reply(status=500, body="oops")]) as server:
        model = register(server, monkeypatch)
        started = time.monotonic()
        vectors = embed(model, TEXTS[:2])
    assert time.monotonic() - started >= 0.3
    assert len(server.seen) == 3
    np.testing.assert_allclose(vectors[1], vector_for(TEXTS[1]), rtol=1e-6)


def test_a_reply_slower_than_the_timeout_is_retried_then_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddingsServer([Reply(delay=1.5), Reply(delay=1.5), Reply(delay=1.5)]) as server:
        model = register(server, monkeypatch)
        with pytest.raises(EndpointError, match="no reply within 1s"):
            load_backend(model).encode(TEXTS[:1])
    assert len(server.seen) == 3  # one try and max_retries=2 retries


@pytest.mark.parametrize("reply, message", [
    (Reply(dimensions=5), "vectors of size 5; this model's vectors have size 8"),
    (Reply(nan=True), "NaN or infinite"),
])
def test_wrong_size_or_nan_vectors_fail_the_run_and_cache_nothing(
        monkeypatch: pytest.MonkeyPatch, reply: Reply, message: str) -> None:
    task = data.build_model_task("sts")
    with EmbeddingsServer([reply]) as server:
        register(server, monkeypatch, dimensions=8)
        with pytest.raises(CommandError, match=message):
            call_command("run_models", task.name, "--models", "remote", "--wait", stdout=io.StringIO())
    assert EmbeddingSlice.objects.count() == 0
    assert ModelRun.objects.get().status == "failed"


def test_a_key_quoted_back_by_the_server_is_never_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply(echo_authorization=True)]) as server:
        register(server, monkeypatch)
        with pytest.raises(CommandError) as failure:
            call_command("run_models", task.name, "--models", "remote", "--wait", stdout=io.StringIO())
    run = ModelRun.objects.get()
    assert "HTTP 400" in run.error and KEY not in run.error and KEY not in str(failure.value)


def test_a_run_through_the_endpoint_scores_sts_from_the_served_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    task = data.build_model_task("sts")
    with EmbeddingsServer([throttled(0.1)]) as server:
        register(server, monkeypatch, batch_size=4)
        out = io.StringIO()
        call_command("run_models", task.name, "--models", "remote", "--wait", stdout=out)
    scores = json.loads(out.getvalue())["models"]["remote"]
    a = np.array([vector_for(s1) for s1, _, _ in data.STS])
    b = np.array([vector_for(s2) for _, s2, _ in data.STS])
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = stats.spearmanr([s for _, _, s in data.STS], cosine).statistic
    assert scores["gold"]["cosine_spearman"] == pytest.approx(expected, abs=1e-9)
    sent = server.texts_sent()
    assert len(set(sent)) == 14 and len(sent) == 14 + 4  # each text once, plus the first batch of 4 again after the 429


def test_a_reply_trickling_a_byte_at_a_time_is_cut_off_at_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23, item 3: each read got a byte within the 1 s timeout, so a per-read timeout never fired and the
    reply (about 250 bytes, one every 0.3 s) held the chunk for over a minute per try. The timeout bounds the
    whole exchange now: three tries of one second each, and the error says so."""
    with EmbeddingsServer([Reply(trickle=0.3), Reply(trickle=0.3), Reply(trickle=0.3)]) as server:
        model = register(server, monkeypatch)
        started = time.monotonic()
        with pytest.raises(EndpointError, match="no reply within 1s"):
            load_backend(model).encode(TEXTS[:1])
        elapsed = time.monotonic() - started
    assert len(server.seen) == 3  # one try and max_retries=2 retries
    assert 3.0 <= elapsed < 8.0  # three one-second tries and the backoff between them (at most 0.5 + 1 s)


def test_a_trickle_that_ends_within_the_timeout_is_a_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddingsServer([Reply(trickle=0.001)]) as server:
        model = register(server, monkeypatch)
        vectors = load_backend(model).encode(TEXTS[:1])
    np.testing.assert_allclose(vectors[0], vector_for(TEXTS[0]), rtol=1e-6)


def test_a_reply_nested_100k_deep_fails_the_run_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23, item 3: the decoder's RecursionError was not caught, so the chunk stayed "running" for good."""
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply(body="[" * 100_000 + "]" * 100_000)]) as server:
        register(server, monkeypatch)
        with pytest.raises(CommandError, match="reply is JSON nested too deeply"):
            call_command("run_models", task.name, "--models", "remote", "--wait", stdout=io.StringIO())
    run = ModelRun.objects.get()
    assert run.status == "failed" and run.error == "ProtocolError: HTTP 200 reply is JSON nested too deeply"
    assert set(run.chunks.values_list("status", flat=True)) == {"queued"}  # nothing left "running"
    assert EmbeddingSlice.objects.count() == 0


def test_a_chunk_whose_workers_keep_dying_fails_its_run_after_the_attempt_limit(
        monkeypatch: pytest.MonkeyPatch, settings) -> None:
    """Issue 23, item 3: a chunk was re-claimed every lease for ever. Here three workers each claim the chunk
    and die before finishing it (claim_chunk is what a worker does first; nothing after it runs), the lease
    lapses each time, and the next worker to come along fails the run, saying why, instead of claiming again."""
    settings.JOB_LEASE_SECONDS = 0.05
    settings.JOB_MAX_ATTEMPTS = 3
    task = data.build_model_task("sts")
    with EmbeddingsServer() as server:
        model = register(server, monkeypatch)
        run = start_run(task, model)
        (chunk,) = run.chunks.all()
        for _ in range(3):
            assert claim_chunk(chunk.pk) is not None  # a worker takes it ... and dies
            time.sleep(0.1)  # its lease lapses
        assert execute_chunk(chunk.pk) == "failed"
        assert server.seen == []  # the fourth worker did not embed it
        run.refresh_from_db()
        assert run.status == "failed"
        assert run.error == ("OutOfAttempts: chunk 1 of 1 was taken 3 times and never finished (its worker "
                             "stopped, or hung past the 0.05-second lease, each time); the run stops here: start "
                             "it again once the cause is fixed")
        assert lapsed_keys(TYPES["model-run chunk"]) == []  # the periodic check sends it no more messages
        rerun = start_run(task, model)  # asked again: the chunk gets its attempts back and the run completes
        assert rerun.pk == run.pk and rerun.chunks.get().attempts == 0
        assert run_in_process(rerun, poll=0.05).status == "done"
