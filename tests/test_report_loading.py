"""Report loading (agreement/core/loading.py): the parallel read on two connections gives exactly what the
one-connection read gives, and leaves no connection behind; the aggregated read (whole columns as single
values, PostgreSQL) gives exactly what the row read (SQLite's) gives; the digests are over content."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.test.utils import CaptureQueriesContext

from agreement.core import loading, loading_queries
from annotation.models import Annotation, Batch
from tasks_app.models import Task

from .conftest import require_postgres
from .report_builders import build_task, import_answers


def open_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_the_parallel_read_equals_the_read_in_order_and_closes_its_connection() -> None:
    require_postgres()
    task = build_task("classification", "loaded-twice", [{"text": f"t{i}", "label": "a"} for i in range(5)],
                      labels=["a", "b"])
    batch = Batch.objects.create(task=task, name="first", language="eng-Latn", overlap=2)
    import_answers(task, [{"item": str(i), "annotator": "uma", "value": "a" if i % 2 else "b"} for i in range(1, 6)],
                   batch=batch)
    import_answers(task, [{"item": "2", "annotator": "vic", "skipped": True, "skip_reason": "unsure"},
                          {"item": "4", "annotator": "vic", "value": "a", "flag_comment": "odd"}])
    before = open_connections()

    assert not connection.in_atomic_block
    parallel = loading.load_answers(task)  # outside a transaction: items and answers on two connections
    with transaction.atomic():
        in_order = loading.load_answers(task)  # inside one: both on this connection

    assert open_connections() == before
    for field in ("items", "annotators", "values", "item_starts", "annotator_agents", "batches", "gold",
                  "answers_digest", "inputs_digest"):
        assert getattr(parallel, field) == getattr(in_order, field), field
    assert np.array_equal(parallel.flagged, in_order.flagged) and np.array_equal(parallel.batch_ids, in_order.batch_ids)
    assert parallel.items == ["1", "2", "3", "4", "5"]  # one per answered item: its run of rows
    assert parallel.annotators == ["uma", "uma", "vic", "uma", "uma", "vic", "uma"]
    assert parallel.values == ["a", "b", None, "a", "b", "a", "a"]
    assert parallel.item_starts == [0, 1, 3, 4, 6]
    assert parallel.flagged.tolist() == [False, False, False, False, False, True, False]
    assert parallel.batch_ids.tolist() == [batch.pk, batch.pk, 0, batch.pk, batch.pk, 0, batch.pk]


LABELS = ["a,b", 'q"]', "سعيد", "null"]  # commas, quotes, brackets, right-to-left text, a JSON keyword


def varied_task(name: str) -> Task:
    """Unicode ids and names, odd labels, skips with and without a stored value, flags, a JSON null value,
    two batches in two languages, answers outside any batch, an item without gold, items nobody answered."""
    records = [{"id": f"ítem-{i}-😀", "text": f"t{i}", "label": LABELS[i % 4]} for i in range(6)]
    task = build_task("classification", name, [*records, {"id": "no-gold", "text": "x"}], labels=LABELS)
    english = Batch.objects.create(task=task, name="round 1", language="eng-Latn", overlap=3)
    arabic = Batch.objects.create(task=task, name="جولة 2", language="ara-Arab", overlap=3)
    import_answers(task, [{"item": f"ítem-{i}-😀", "annotator": "zoë", "value": LABELS[(i + 1) % 4],
                           **({"flag_comment": "odd, \"really\""} if i == 2 else {})} for i in range(5)], english)
    import_answers(task, [{"item": f"ítem-{i}-😀", "annotator": "عمر", "value": LABELS[i % 4]} for i in (0, 1, 3)]
                   + [{"item": "ítem-2-😀", "annotator": "عمر", "skipped": True, "skip_reason": "?"}], arabic)
    import_answers(task, [{"item": "no-gold", "annotator": "zoë", "value": "a,b"},
                          {"item": "ítem-1-😀", "annotator": "judge", "annotator_agent": "llm", "value": "null"},
                          {"item": "ítem-3-😀", "annotator": "judge", "annotator_agent": "llm", "value": 'q"]'}])
    answers = Annotation.objects.filter(item__task=task)
    answers.filter(item__external_id="ítem-3-😀", annotator__user__username="judge").update(value=json_null())
    answers.filter(item__external_id="ítem-0-😀", annotator__user__username="عمر").update(skipped=True)  # keeps a value
    return task


def json_null() -> RawSQL:
    """A JSON null (not SQL NULL, which is how Django stores None) for an update."""
    return RawSQL("'null'::jsonb" if connection.vendor == "postgresql" else "'null'", [])


@pytest.mark.django_db
def test_the_aggregated_read_equals_the_row_read_field_for_field() -> None:
    require_postgres()
    task = varied_task("varied")

    columns = loading_queries.answer_columns_aggregated(task)
    row_columns = loading_queries.answer_columns_by_rows(task)
    items, item_rows = loading_queries.item_columns_aggregated(task), loading_queries.item_columns_by_rows(task)
    aggregated = loading.load_answers(task)
    by_rows = loading.load_answers(task, by_rows=True)

    assert columns.values_json == row_columns.values_json and len(columns) == 12
    for name in ("item_ids", "annotator_ids", "batch_ids", "flagged", "skipped"):
        assert getattr(columns, name).tolist() == getattr(row_columns, name).tolist(), name
    assert items.external_ids == item_rows.external_ids and items.gold_json == item_rows.gold_json
    assert items.item_ids.tolist() == item_rows.item_ids.tolist() and len(items.gold_item_ids) == 6
    assert items.gold_item_ids.tolist() == item_rows.gold_item_ids.tolist()
    with CaptureQueriesContext(connection):  # a debug cursor reads in text format: the same columns
        logged = loading_queries.answer_columns_aggregated(task)
    assert logged.values_json == columns.values_json and logged.item_ids.tolist() == columns.item_ids.tolist()
    assert logged.flagged.tolist() == columns.flagged.tolist() and logged.skipped.tolist() == columns.skipped.tolist()

    for field in ("items", "annotators", "values", "item_starts", "annotator_agents", "batches", "gold",
                  "answers_digest", "inputs_digest"):
        assert getattr(aggregated, field) == getattr(by_rows, field), field
    assert np.array_equal(aggregated.flagged, by_rows.flagged)
    assert np.array_equal(aggregated.batch_ids, by_rows.batch_ids)
    assert aggregated.items == [f"ítem-{i}-😀" for i in range(5)] + ["no-gold"]
    assert aggregated.item_starts == [0, 2, 5, 7, 10, 11]
    assert aggregated.run_lengths() == [2, 3, 2, 3, 1, 1]
    assert aggregated.annotators == ["zoë", "عمر", "zoë", "عمر", "judge", "zoë", "عمر", "zoë", "عمر", "judge",
                                     "zoë", "zoë"]  # annotators by id within each item: in order of creation
    assert aggregated.values == ['q"]', None, "سعيد", 'q"]', "null", "null", None, "a,b", "null", None, 'q"]', "a,b"]
    assert aggregated.flagged.sum() == 1 and aggregated.values[aggregated.flagged.argmax()] == "null"
    arabic = Batch.objects.get(task=task, name="جولة 2").pk
    assert aggregated.batches[arabic] == ("جولة 2", "ara-Arab") and (aggregated.batch_ids == 0).sum() == 3
    assert aggregated.annotator_agents == {"zoë": "human", "عمر": "human", "judge": "llm"}
    assert aggregated.gold == {f"ítem-{i}-😀": LABELS[i % 4] for i in range(6)}


@pytest.mark.django_db
def test_rows_out_of_key_order_are_read_again_row_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL feeds an aggregate in its sorted subquery's order only in practice: the loader checks."""
    require_postgres()
    task = varied_task("shuffled")
    aggregated = loading_queries.answer_columns_aggregated(task)
    backwards = {name: getattr(aggregated, name)[::-1] for name in
                 ("item_ids", "annotator_ids", "batch_ids", "flagged", "skipped")}
    monkeypatch.setattr(loading_queries, "answer_columns_aggregated",
                        lambda task: replace(aggregated, **backwards))

    assert loading_queries.in_key_order(aggregated)
    assert not loading_queries.in_key_order(replace(aggregated, **backwards))
    assert loading.load_answers(task).values == loading.load_answers(task, by_rows=True).values


@pytest.mark.django_db
def test_the_digests_are_by_content_the_same_for_a_copy_of_the_task_and_a_flag_changes_only_the_inputs() -> None:
    original = varied_task("original")
    copy = varied_task("copy")
    assert not set(copy.items.values_list("pk", flat=True)) & set(original.items.values_list("pk", flat=True))

    before, copied = loading.load_answers(original), loading.load_answers(copy)
    assert (copied.answers_digest, copied.inputs_digest) == (before.answers_digest, before.inputs_digest)

    Annotation.objects.filter(item__task=copy, annotator__user__username="zoë", item__external_id="no-gold").update(
        flagged=True)
    flagged = loading.load_answers(copy)
    assert flagged.answers_digest == before.answers_digest and flagged.inputs_digest != before.inputs_digest

    Batch.objects.filter(task=copy, name="round 1").update(language="dan-Latn")
    assert loading.load_answers(copy).inputs_digest not in (before.inputs_digest, flagged.inputs_digest)

    Annotation.objects.filter(item__task=copy, annotator__user__username="عمر", item__external_id="ítem-2-😀").update(
        skipped=False, value="a,b")
    changed = loading.load_answers(copy)
    assert changed.answers_digest != before.answers_digest and changed.values.count(None) == 2


def test_distinct_ids_counts_small_ids_and_sorts_large_ones() -> None:
    assert loading.distinct_ids(np.array([7, 0, 7, 3, 0], dtype=np.int64)) == [0, 3, 7]
    assert loading.distinct_ids(np.array([1 << 40, 5, 1 << 40], dtype=np.int64)) == [5, 1 << 40]
    assert loading.distinct_ids(np.zeros(0, dtype=np.int64)) == []
