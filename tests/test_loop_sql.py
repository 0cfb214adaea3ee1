"""The loop's plain SQL (annotation/core/rawsql.py): rows become the same model instances as through the ORM,
errors are Django's, and on PostgreSQL the statements are prepared with one generic plan each."""
from __future__ import annotations

from datetime import date
from typing import NamedTuple

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.core import assignment as engine
from annotation.core import rawsql
from annotation.models import Annotation, Annotator, Batch
from tasks_app.models import Item, Task

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from .conftest import require_postgres

pytestmark = pytest.mark.django_db


def row_of(model, pk: int) -> tuple:
    return rawsql.one(f"SELECT {rawsql.columns(model, 'x')} FROM {model._meta.db_table} x WHERE x.id = %s", [pk])


def test_instances_from_rows_equal_the_orms_field_for_field(alice):
    task = make_task(n=2)
    Task.objects.filter(pk=task.pk).update(axes=["overall"], scale_min=1.5, instructions="Read **all**.")
    batch = make_batch(task, [alice])
    Batch.objects.filter(pk=batch.pk).update(due_date=date(2031, 5, 17), is_open=False)
    for model, pk in ((Task, task.pk), (Batch, batch.pk), (Annotator, alice.pk), (Item, task.items.first().pk)):
        built, loaded = rawsql.instance(model, row_of(model, pk)), model.objects.get(pk=pk)
        for field in model._meta.concrete_fields:
            assert getattr(built, field.attname) == getattr(loaded, field.attname), (model, field.name)
        assert built._state.adding is False and built._state.db == "default"
    assert rawsql.instance(Batch, row_of(Batch, batch.pk)).is_open is False  # a bool on SQLite too


def test_a_failing_statement_raises_djangos_error_and_leaves_the_connection_usable(alice):
    batch = make_batch(make_task(n=1), [alice])
    item = engine.next_item(alice, batch)
    engine.submit_answer(alice, batch, item, "positive")
    duplicate = (f"INSERT INTO {Annotation._meta.db_table} (item_id, annotator_id, batch_id, value, skipped, "
                 "skip_reason, flagged, flag_comment, submitted_at, updated_at, source) "
                 "VALUES (%s, %s, %s, '\"negative\"', %s, '', %s, '', %s, %s, 'api')")
    now = Annotation.objects.get().submitted_at
    with pytest.raises(IntegrityError), transaction.atomic():
        rawsql.one(duplicate, [item.pk, alice.pk, batch.pk, False, False, now, now])
    assert rawsql.one("SELECT COUNT(*) FROM annotation_annotation", []) == (1,)


class Pair(NamedTuple):
    total: int
    label: str


def test_named_parameters_bind_by_name_and_a_name_used_twice_is_one_value():
    assert rawsql.one("SELECT %(n)s + %(n)s, %(word)s", {"word": "ok", "n": 2}) == (4, "ok")
    assert rawsql.one("SELECT %s + %s", [2, 3]) == (5,)  # positional placeholders still work


def test_a_row_comes_back_as_its_named_row_type():
    select = rawsql.select(Pair, total="%(n)s * 10", label="%(word)s")
    assert select == "%(n)s * 10 AS total, %(word)s AS label"
    found = rawsql.row(f"SELECT {select}", {"n": 4, "word": "forty"}, Pair)
    assert found == Pair(total=40, label="forty") and found.label == "forty"
    assert rawsql.row(f"SELECT {select} WHERE 1 = 0", {"n": 4, "word": "none"}, Pair) is None


def test_a_select_list_that_drifts_from_its_row_type_is_refused():
    with pytest.raises(ValueError, match=r"Pair: the select list names \('label', 'total'\)"):
        rawsql.select(Pair, label="'x'", total="1")
    with pytest.raises(ValueError, match="Pair"):
        rawsql.select(Pair, total="1")


@pytest.mark.django_db(transaction=True)
def test_the_kept_cursor_follows_a_new_connection():
    require_postgres()
    assert rawsql.one("SELECT 1", []) == (1,)
    connection.close()
    assert rawsql.one("SELECT 2", []) == (2,)


def test_loop_statements_are_prepared_with_a_generic_plan_on_postgresql(alice):
    require_postgres()
    batch = make_batch(make_task(n=12), [alice])
    for _ in range(8):  # past the prepare threshold (5) and PostgreSQL's first custom plans
        item = engine.next_item(alice, batch)
        engine.annotator_progress(alice, batch)
        engine.submit_answer(alice, batch, item, "positive", source="api")
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        prepared = cursor.fetchall()
    progress = [row for row in prepared if row[0].startswith("WITH live AS")]
    assert progress and progress[0][1] > 0 and progress[0][2] == 0
    assert any("FOR NO KEY UPDATE OF ba" in statement for statement, _, _ in prepared)


def test_generic_plans_are_never_jit_compiled_on_postgresql(alice):
    """A generic plan's cost is estimated for an average annotator; with an earlier study's heavy annotators in
    the database it crossed jit_above_cost and PostgreSQL compiled the progress statement on every request
    (30-50 ms each, measured on a 20,000-item batch, for a statement that runs in about 1 ms)."""
    require_postgres()
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_generic_plan",)
