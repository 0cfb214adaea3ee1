"""Plain SQL for the annotator loop's hot path: statements PostgreSQL keeps prepared, and model instances built
from their rows the way the ORM builds them.

Why this exists: every next/answer request runs the same dozen statements. Measured on the 2-core test
machine, building an ORM query cost ~1 ms of Python each (more than PostgreSQL took to answer it), and
PostgreSQL spent more time planning the engine's statements (0.2-1 ms each) than running them (~0.1 ms).
Only the loop's statements use this module (with the campaign probe each of its answers runs,
agreement/campaigns/review_queue.py); everything else stays on the ORM.

Prepared statements: Django's cursors bind parameters on the client, so the server parses and plans each
statement anew. `cursor()` hands out a server-binding psycopg cursor instead; psycopg prepares a statement
after its `prepare_threshold`-th run on a connection (settings: DATABASES OPTIONS) and PostgreSQL reuses the
plan (one generic plan: settings). Django's own cursors never prepare.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model
from psycopg.pq import ExecStatus

M = TypeVar("M", bound=Model)
R = TypeVar("R", bound=tuple)  # a NamedTuple row type
# Named placeholders, `%(name)s` with a dict, read on both backends (psycopg; Django's SQLite cursor turns them
# into `:name`); a name used twice is one parameter ($n) on PostgreSQL. Positional `%s` with a list still works.
Params = Mapping[str, Any] | Sequence[Any]
TUPLES_OK = ExecStatus.TUPLES_OK


def select(row_type: type[tuple], **expressions: str) -> str:
    """The select list `expression AS field, ...` of a NamedTuple row type, in its field order, so every column
    the code reads is named in the SQL too. A list that drifts from its row type fails at import, not later with
    a value in the wrong field."""
    fields = row_type._fields  # type: ignore[attr-defined]
    if tuple(expressions) != fields:
        raise ValueError(f"{row_type.__name__}: the select list names {tuple(expressions)}, "
                         f"the row type {fields}")
    return ", ".join(f"{expression} AS {name}" for name, expression in expressions.items())


def row(sql: str, params: Params, row_type: type[R]) -> R | None:
    """The first row of a statement as a `row_type` (None if it returns none), prepared on PostgreSQL."""
    found = one(sql, params)
    return None if found is None else row_type._make(found)  # type: ignore[attr-defined]


def one(sql: str, params: Params) -> tuple | None:
    """The first row of a statement as a plain tuple (None if it returns none), prepared on PostgreSQL."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or db.queries_logged:
        # A plain Django cursor: SQLite, and while queries are logged (DEBUG, CaptureQueriesContext), so that
        # the log shows each statement with its values as usual.
        with db.cursor() as plain:
            plain.execute(sql, params)
            return plain.fetchone() if plain.description else None
    kept = _kept_cursor(db)
    db.validate_no_broken_transaction()
    with db.wrap_database_errors:  # Django's exception classes, as its own cursors raise them
        kept.execute(sql, params)
        # The result's status, not `description`: that builds a Column object per column on every call.
        return kept.fetchone() if kept.pgresult.status == TUPLES_OK else None


def _kept_cursor(db: Any) -> Any:
    """The connection's server-binding psycopg cursor, kept open and reused. Creating a cursor cost a third of
    a simple statement, and Django's cursor wrapper another third; `one` does what the wrapper does that
    matters here (broken-transaction check, error translation)."""
    db.close_if_health_check_failed()
    db.ensure_connection()
    kept = getattr(db, "_loop_cursor", None)
    if kept is None or kept.closed or kept.connection is not db.connection:
        from django.db.backends.postgresql.base import ServerBindingCursor

        db.validate_thread_sharing()
        kept = db._loop_cursor = ServerBindingCursor(db.connection)
    return kept


def columns(model: type[Model], alias: str) -> str:
    """The select list of a model's concrete columns, in field order, for `instance`."""
    return ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in model._meta.concrete_fields)


def instance(model: type[M], values: Sequence[Any]) -> M:
    """A model instance from the values of `columns(model, ...)`, converted as the ORM converts them (JSON text
    to Python on both backends; dates and booleans on SQLite)."""
    db = connections[DEFAULT_DB_ALIAS]
    converted = list(values)
    for index, expression, converters in _converters(model, db.vendor):
        value = converted[index]
        for convert in converters:
            value = convert(value, expression, db)
        converted[index] = value
    return model.from_db(db.alias, None, converted)


@cache
def _converters(model: type[Model], vendor: str) -> list[tuple[int, Any, list[Callable]]]:
    """The ORM's per-column converters of a model; they depend only on the backend and the settings."""
    found = []
    for index, field in enumerate(model._meta.concrete_fields):
        expression = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(expression) + field.get_db_converters(connection)
        if converters:
            found.append((index, expression, converters))
    return found


def width(model: type[Model]) -> int:
    """How many values `columns(model, ...)` selects, to split a joined row between models."""
    return len(model._meta.concrete_fields)
