"""The CPU work around encoding, cut so a GPU is not left waiting (issue 27, bench/bench_device.py pipeline):
a run's vectors kept in memory for its scoring, cache lookups run lazily beside the encoder, a chunk's items
read as one id range, a run in one process claiming its chunks in batches (issue 37), predictions written with
one INSERT, and an embedding run's name checked before any encoding. Each test checks that the faster path gives
exactly what the plain one gives."""
from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agreement.model_runs import execution
from agreement.model_runs.embedding import cosine_pairs, cosine_rows, embed, stacked
from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice, ModelRun, Prediction
from tasks_app.models import Item
from tests import model_data as data
from tests.embedding_roundtrip import forget_process_state

pytestmark = pytest.mark.django_db


def minilm() -> EmbeddingModel:
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    return EmbeddingModel.objects.get(name="minilm")


def test_a_run_scored_where_its_chunks_ran_reads_no_vector_back_and_scores_as_one_read_from_the_cache() -> None:
    model, task = minilm(), data.build_model_task("sts")
    run = execution.start_run(task, model, chunk_texts=4)  # 7 pairs, 14 texts: four chunks
    assert run.chunks_total == 4
    for chunk_id in execution.unfinished_chunks(run)[:-1]:
        execution.execute_chunk(chunk_id)
    with CaptureQueriesContext(connection) as queries:
        assert execution.execute_chunk(execution.unfinished_chunks(run)[0]) == "scored"  # the last, then scoring
    cache_table = EmbeddingSlice._meta.db_table
    reads = [q["sql"] for q in queries.captured_queries
             if cache_table in q["sql"] and q["sql"].lstrip().upper().startswith("SELECT")]
    assert len(reads) == 1  # the last chunk's lookup (the slices' ids, all known); the scoring's 14 from memory
    assert "vectors" not in reads[0]
    run.refresh_from_db()
    held_scores = run.scores
    held_predictions = dict(Prediction.objects.filter(run=run).values_list("item_id", "value"))
    assert run.pk not in execution._held  # given up once scored

    # the same run scored again by a process that holds nothing: every vector read from the cache, a slice a query
    ModelRun.objects.filter(pk=run.pk).update(status=ModelRun.Status.QUEUED)
    forget_process_state()
    with CaptureQueriesContext(connection) as queries:
        assert execution.score_if_ready(run.pk) == "scored"
    slice_reads = [q for q in queries.captured_queries if cache_table in q["sql"] and '"vectors"' in q["sql"]]
    assert len(slice_reads) == 4  # the four chunks' slices, each read once
    run.refresh_from_db()
    assert run.scores == held_scores
    assert dict(Prediction.objects.filter(run=run).values_list("item_id", "value")) == held_predictions
    assert len(held_predictions) == len(data.STS)


def test_held_vectors_stay_within_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    execution._held.clear()
    execution.held_vectors(1).update({"a": np.zeros(384, dtype=np.float32), "b": np.zeros(384, dtype=np.float32)})
    execution.held_vectors(2).update({"c": np.zeros(384, dtype=np.float32)})
    monkeypatch.setattr(execution, "HELD_BYTES", 2 * 384 * 4)  # room for two vectors: run 1 (oldest) goes
    assert execution.held_vectors(3) == {}
    assert sorted(execution._held) == [2, 3]
    execution._held.clear()


def test_known_vectors_are_neither_looked_up_nor_encoded() -> None:
    model = minilm()
    texts = ["A cat sat on the mat.", "A dog slept.", "A cat sat on the mat.", "Rain fell all night."]
    plain = embed(model, texts)
    known = {texts[0]: plain[0], texts[1]: plain[1]}
    stats: dict[str, int] = {}
    with CaptureQueriesContext(connection) as queries:
        again = embed(model, texts, stats=stats, known=known)
    assert np.array_equal(again, plain)
    assert stats == {"encoded": 0, "cached": 4}
    assert len(queries.captured_queries) == 2  # the lookup of the one text memory lacks: its slice's ids, its slice
    assert set(known) == set(texts)  # given every vector of the call
    with CaptureQueriesContext(connection) as queries:
        embed(model, texts[:2], known=known)
    assert len(queries.captured_queries) == 0


def test_a_chunks_items_read_as_one_range_or_in_batches_are_the_same_payloads() -> None:
    task = data.build_model_task("sts")
    other = data.build_model_task("sts", name="other sts")  # its ids follow: outside every range of the first
    ids = list(Item.objects.filter(task=task).order_by("position").values_list("id", flat=True))
    plain = dict(Item.objects.filter(pk__in=ids).values_list("id", "payload"))
    assert execution.chunk_payloads(task.id, ids[1:5]) == {i: plain[i] for i in ids[1:5]}  # one range
    assert execution.chunk_payloads(task.id, [ids[0], ids[-1]]) == {ids[0]: plain[ids[0]], ids[-1]: plain[ids[-1]]}
    assert Item.objects.filter(task=other).count() == len(ids)


def test_an_embedding_run_under_a_taken_name_is_refused_before_anything_is_encoded() -> None:
    from agreement.retrieval.models import Collection, Document, Query, Subset
    from agreement.retrieval.system_rankings import embedding_ranking

    collection = Collection.objects.create(name="c")
    subset = Subset.objects.create(collection=collection, name="default", language="eng-Latn")
    Document.objects.create(subset=subset, doc_id="d1", text="aspirin and colon cancer", line=1)
    Query.objects.create(subset=subset, query_id="q1", text="aspirin", line=1)
    asked: list[list[str]] = []

    def vectors(texts: list[str]) -> np.ndarray:
        asked.append(texts)
        return np.ones((len(texts), 3))

    embedding_ranking(collection, "x", vectors, k=1)
    assert asked == [["aspirin"], ["aspirin and colon cancer"]]
    with pytest.raises(ValueError, match="already has a ranking named 'x'"):
        embedding_ranking(collection, "x", vectors, k=1)
    assert len(asked) == 2


def test_a_run_in_one_process_reads_its_items_once_and_scores_as_a_worker_would() -> None:
    model, task = minilm(), data.build_model_task("sts")
    item_table = Item._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        run = execution.run_in_process(execution.start_run(task, model, chunk_texts=4), poll=0.05)
    payload_reads = [q["sql"] for q in queries.captured_queries
                     if q["sql"].lstrip().upper().startswith("SELECT") and f'"{item_table}"."payload"' in q["sql"]]
    assert run.status == ModelRun.Status.DONE and run.chunks_total == 4
    assert len(payload_reads) == 1  # start_run's; not again per chunk nor for the scoring
    in_process = run.scores

    ModelRun.objects.filter(pk=run.pk).update(status=ModelRun.Status.QUEUED)  # scored again, reading it all
    assert execution.score_if_ready(run.pk) == "scored"
    run.refresh_from_db()
    assert run.scores == in_process


def test_a_run_in_one_process_claims_its_chunks_in_batches_and_counts_each_chunks_encoded_texts(settings) -> None:  # type: ignore[no-untyped-def]
    settings.JOB_LEASE_SECONDS = 600  # batches of 100 s: a loaded machine's chunk of 4 texts is far less
    model, task = minilm(), data.build_model_task("sts")
    embed(model, ["warm the model up"])  # the first batch's pace is the encoder's, not the model's loading
    run = execution.run_in_process(execution.start_run(task, model, chunk_texts=4), poll=0.05)
    assert run.status == ModelRun.Status.DONE and run.chunks_total == 4
    chunks = list(run.chunks.order_by("index").values_list("status", "attempts", "encoded", "started_at"))
    assert [(status, attempts) for status, attempts, _, _ in chunks] == [("done", 1)] * 4
    assert len({started for *_, started in chunks}) == 2  # one chunk to measure the pace, then the other three
    assert sum(encoded for _, _, encoded, _ in chunks) == run.texts_encoded > 0  # each text counted once


def test_the_batch_size_follows_the_last_batchs_pace_within_a_sixth_of_a_lease(settings) -> None:  # type: ignore[no-untyped-def]
    settings.JOB_LEASE_SECONDS = 60  # a batch of 10 s
    assert execution.batch_size(1, 0.05, largest=78) == 78  # a fast encoder: the rest in one claim
    assert execution.batch_size(4, 2.0, largest=78) == 20
    assert execution.batch_size(1, 30.0, largest=78) == 1  # a slow one: a chunk a claim, as a worker


@pytest.mark.parametrize("values", [{"gold": 0.1, "humans": 1e-320}, {"gold": -0.0, "humans": None}])
def test_predictions_written_in_one_statement_read_back_as_the_values_given(values) -> None:  # type: ignore[no-untyped-def]
    model, task = minilm(), data.build_model_task("sts")
    run = execution.start_run(task, model)
    ids = list(Item.objects.filter(task=task).values_list("id", flat=True))
    given = {i: {**values, "gold": values["gold"] * (n + 1) / 3} for n, i in enumerate(ids)}
    with CaptureQueriesContext(connection) as queries:
        execution.write_predictions(run.pk, given)
    assert sum("INSERT" in q["sql"] for q in queries.captured_queries) == 1
    assert dict(Prediction.objects.filter(run=run).values_list("item_id", "value")) == given


def test_predictions_json_cannot_hold_are_written_row_by_row_as_before() -> None:
    model, task = minilm(), data.build_model_task("sts")
    run = execution.start_run(task, model)
    ids = list(Item.objects.filter(task=task).values_list("id", flat=True))
    if connection.vendor == "postgresql":  # jsonb refuses NaN, as it did before: the run's error says so
        with pytest.raises(Exception, match="(?i)nan|json"):
            execution.write_predictions(run.pk, {ids[0]: {"gold": float("nan")}})
        return
    execution.write_predictions(run.pk, {ids[0]: {"gold": float("nan")}, ids[1]: {"gold": 0.5}})
    stored = dict(Prediction.objects.filter(run=run).values_list("item_id", "value"))
    assert np.isnan(stored[ids[0]]["gold"]) and stored[ids[1]] == {"gold": 0.5}


def test_cosines_of_held_vectors_slice_by_slice_equal_those_of_the_whole_stack_bit_for_bit() -> None:
    """`cosine_pairs` stacks 1,024 pairs at a time instead of every vector at once: each pair's cosine is the
    same float64 number, float16 vectors, a zero vector and a last slice shorter than the others included."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2 * 2500, 384)).astype(np.float32)
    vectors[3] = 0.0
    texts = [f"text {n}" for n in range(len(vectors))]
    a, b = texts[:2500], texts[2500:]
    for by_text in ({t: v for t, v in zip(texts, vectors, strict=True)},
                    {t: v.astype(np.float16) for t, v in zip(texts, vectors, strict=True)}):
        whole = stacked([by_text[t] for t in [*a, *b]])
        expected = cosine_rows(whole[:2500], whole[2500:], rows=8192)
        assert np.array_equal(cosine_pairs(by_text, a, b), expected)
        assert cosine_pairs(by_text, a, b)[3] == 0.0
