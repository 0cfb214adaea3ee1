"""The embedding cache's store (issue 37, agreement/model_runs/embedding_store.py): vectors come back bit for bit
on PostgreSQL and SQLite, one model's cache never answers another's texts, a killed run's finished slices are
not encoded again, old per-text rows are packed into slices by the migration, the cache is pruned by model, and
`--no-cache` writes nothing."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from agreement.model_runs import embedding_store
from agreement.model_runs.embedding import embed, text_hash
from agreement.model_runs.execution import enqueue, start_run
from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice, ModelRun
from tests import model_data as data
from tests.conftest import require_postgres
from tests.embedding_roundtrip import forget_process_state, roundtrip
from tests.embeddings_server import EmbeddingsServer, Reply, vector_for
from tests.test_report_worker_crash import kill_whole_worker

REPO = Path(__file__).resolve().parent.parent
TEXTS = ["alpha one", "beta two", "gamma three", "delta four", "epsilon five", "zeta six", "eta seven"]


def remote(server: EmbeddingsServer, name: str, model_id: str = "embed-small") -> EmbeddingModel:
    return EmbeddingModel.objects.create(name=name, backend="openai", base_url=server.base_url, model_id=model_id,
                                         max_retries=0, timeout_seconds=10)


@pytest.mark.django_db
def test_vectors_come_back_bit_for_bit_on_postgresql() -> None:
    require_postgres()
    assert roundtrip() == []


def test_vectors_come_back_bit_for_bit_on_sqlite(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/cache.sqlite3",
           "DJANGO_SETTINGS_MODULE": "tests.settings"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO, env=env, check=True,
                   timeout=600)
    done = subprocess.run([sys.executable, "tests/embedding_roundtrip.py"], cwd=REPO, env=env, check=True,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "bit for bit"


@pytest.mark.django_db
@pytest.mark.usefixtures("local_llm_endpoints")
def test_a_models_cache_never_answers_another_models_texts() -> None:
    digests = [text_hash(t) for t in TEXTS]
    mine, theirs = np.ones((7, 4), dtype=np.float32), np.full((7, 4), 2.0, dtype=np.float32)
    embedding_store.store("m" * 64, digests, mine)
    embedding_store.store("t" * 64, digests, theirs)
    forget_process_state()
    assert np.stack(list(embedding_store.lookup("m" * 64, digests).values())).tolist() == mine.tolist()
    assert np.stack(list(embedding_store.lookup("t" * 64, digests).values())).tolist() == theirs.tolist()

    with EmbeddingsServer() as server:  # two endpoint models: different model ids, so different identities
        small, large = remote(server, "small"), remote(server, "large", model_id="embed-large")
        stats: dict[str, int] = {}
        embed(small, TEXTS, stats=stats)
        assert stats == {"encoded": 7, "cached": 0}
        stats = {}
        again = embed(large, TEXTS, stats=stats)
        assert stats == {"encoded": 7, "cached": 0}  # every text sent again: small's vectors are not large's
        assert server.texts_sent() == TEXTS + TEXTS
    assert np.array_equal(again, np.asarray([vector_for(t) for t in TEXTS], dtype=np.float32))
    assert sorted(EmbeddingSlice.objects.values_list("model_identity", flat=True)) == sorted(
        ["m" * 64, "t" * 64, small.identity, large.identity])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("local_llm_endpoints")
def test_a_run_killed_mid_chunk_keeps_its_finished_slices_and_encodes_only_the_rest(start_worker, monkeypatch) -> None:
    """One chunk of 14 texts in slices of 4 on a slow endpoint: the worker is killed after two slices were
    stored. The next worker sends the endpoint exactly the texts no stored slice holds."""
    monkeypatch.setenv("JOB_LEASE_SECONDS", "3")
    monkeypatch.setenv("MODEL_CACHE_SLICE_TEXTS", "4")  # read by the workers at start
    task = data.build_model_task("sts")
    with EmbeddingsServer([Reply(delay=1.0) for _ in range(20)]) as server:
        model = remote(server, "remote")
        run = start_run(task, model, chunk_texts=100)
        assert run.chunks_total == 1
        doomed = start_worker()
        enqueue(run)
        deadline = time.monotonic() + 90
        while EmbeddingSlice.objects.count() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        kill_whole_worker(doomed)
        stored = [bytes(c) for c in EmbeddingSlice.objects.values_list("digests", flat=True)]
        stored_digests = {column[n:n + 32] for column in stored for n in range(0, len(column), 32)}
        assert len(stored_digests) >= 8  # two slices of four, at least
        sent_before = len(server.texts_sent())

        start_worker()
        deadline = time.monotonic() + 120
        while not ModelRun.objects.filter(pk=run.pk, status="done").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        finished = ModelRun.objects.get(pk=run.pk)
        sent_after = server.texts_sent()[sent_before:]

    assert finished.status == "done", finished.error
    assert len(sent_after) == 14 - len(stored_digests)
    assert not {text_hash(t) for t in sent_after} & stored_digests  # no text of a finished slice went again
    assert finished.predictions.count() == 7


def migrate(targets: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    MigrationExecutor(connection).migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_migration_packs_the_old_per_text_rows_into_slices_bit_for_bit() -> None:
    old = migrate([("model_runs", "0007_model_runs_on_job_layer")])
    try:
        rows = old.get_model("model_runs", "CachedEmbedding")
        vectors = np.random.default_rng(8).standard_normal((5, 6)).astype(np.float32)
        for text, vector in zip(TEXTS[:5], vectors, strict=True):
            rows.objects.create(model_identity="o" * 64, text_hash=text_hash(text).hex(), dimensions=6,
                                vector=vector.tobytes())
        rows.objects.create(model_identity="p" * 64, text_hash=text_hash("other").hex(), dimensions=2,
                            vector=np.array([1.5, -2.0], dtype=np.float32).tobytes())

        migrate([("model_runs", "0008_embedding_slices")])

        forget_process_state()
        got = embedding_store.lookup("o" * 64, [text_hash(t) for t in TEXTS])
        assert list(got) == [text_hash(t) for t in TEXTS[:5]]
        assert np.stack(list(got.values())).tobytes() == vectors.tobytes()
        assert embedding_store.lookup("p" * 64, [text_hash("other")])[text_hash("other")].tolist() == [1.5, -2.0]
        assert EmbeddingSlice.objects.count() == 2
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        forget_process_state()


@pytest.mark.django_db
@pytest.mark.usefixtures("local_llm_endpoints")
def test_the_cache_is_pruned_by_model_and_of_identities_no_model_has() -> None:
    with EmbeddingsServer() as server:
        small, large = remote(server, "small"), remote(server, "large", model_id="embed-large")
        embed(small, TEXTS)
        embed(large, TEXTS[:3])
        out = io.StringIO()
        call_command("prune_embedding_cache", "--models", "small", stdout=out)
        assert out.getvalue().strip() == "deleted 1 slices (7 vectors) of 1 model identities"
        assert list(EmbeddingSlice.objects.values_list("model_identity", flat=True)) == [large.identity]
        stats: dict[str, int] = {}
        embed(small, TEXTS, stats=stats)
        assert stats["encoded"] == 7  # its vectors are gone, also from this process's index

        large.delete()
        call_command("prune_embedding_cache", "--unregistered", stdout=out)
        assert list(EmbeddingSlice.objects.values_list("model_identity", flat=True)) == [small.identity]
    with pytest.raises(CommandError, match="one of them"):
        call_command("prune_embedding_cache", stdout=out)


@pytest.mark.django_db
def test_no_cache_runs_a_model_and_writes_nothing_to_the_cache() -> None:
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    data.build_model_task("sts", name="plain")
    with pytest.raises(CommandError, match="--no-cache needs --wait"):
        call_command("run_models", "plain", "--models", "minilm", "--no-cache", stdout=io.StringIO())
    out = io.StringIO()
    call_command("run_models", "plain", "--models", "minilm", "--wait", "--no-cache", stdout=out)
    assert '"texts_encoded": 14' in out.getvalue()
    assert not EmbeddingSlice.objects.exists()
    assert ModelRun.objects.get().scores["gold"]["main_score"] is not None


@pytest.mark.django_db
def test_a_slice_written_in_a_transaction_that_rolls_back_is_neither_stored_nor_answered() -> None:
    """The slice's INSERT (bound on the server on PostgreSQL, through a cursor of its own on Django's connection)
    is part of the caller's transaction: rolled back with it, and the process's index, which saw it, only
    misses."""
    digests = [text_hash(t) for t in TEXTS]
    vectors = np.arange(7 * 5, dtype=np.float32).reshape(7, 5)

    class Undone(Exception):
        pass

    with pytest.raises(Undone), transaction.atomic():
        assert embedding_store.store("rolled back", digests, vectors) is not None
        assert EmbeddingSlice.objects.filter(model_identity="rolled back").count() == 1
        raise Undone
    assert EmbeddingSlice.objects.filter(model_identity="rolled back").count() == 0
    assert embedding_store.lookup("rolled back", digests) == {}
    kept = embedding_store.store("rolled back", digests, vectors)
    found = embedding_store.lookup("rolled back", digests)
    assert EmbeddingSlice.objects.get().pk == kept
    assert np.array_equal(np.stack([found[d] for d in digests]), vectors)
