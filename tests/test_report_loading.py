"""Report loading (agreement/loading.py): the parallel read on two connections gives exactly what the
one-connection read gives, and leaves no connection behind."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction

from agreement import loading
from annotation.models import Batch

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
    for field in ("items", "annotators", "values", "item_starts", "annotator_kinds", "batches", "gold",
                  "answers_digest", "inputs_digest"):
        assert getattr(parallel, field) == getattr(in_order, field), field
    assert np.array_equal(parallel.flagged, in_order.flagged) and np.array_equal(parallel.batch_ids, in_order.batch_ids)
    assert parallel.items == ["1", "2", "2", "3", "4", "4", "5"]
    assert parallel.values == ["a", "b", None, "a", "b", "a", "a"]
    assert parallel.item_starts == [0, 1, 3, 4, 6]
    assert parallel.flagged.tolist() == [False, False, False, False, False, True, False]
    assert parallel.batch_ids.tolist() == [batch.pk, batch.pk, 0, batch.pk, batch.pk, 0, batch.pk]
