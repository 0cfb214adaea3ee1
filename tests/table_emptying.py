"""The end of a transactional test on PostgreSQL: empty the tables a test wrote, with DELETE, instead of Django's
TRUNCATE of every table.

Django's `TransactionTestCase` (pytest-django's `transactional_db`, the live server, the worker tests) ends each
test with the `flush` command: one TRUNCATE of all the project's tables, then the `post_migrate` signal (content
types, permissions, the role groups: hume/roles.py). The TRUNCATE gives every table, index and TOAST table a new
file, so it costs the server about a second of disk work even when the test wrote three rows (0.8-1.5 s measured on
the two-core machine, 2-8 s under load; the signal 0.2 s), for each of the suite's 250-odd transactional tests.

`empty_written_tables` leaves the same state: it finds the tables holding rows in one query and DELETEs their rows
in one transaction (Django's foreign keys are DEFERRABLE INITIALLY DEFERRED, so the order does not matter), then
sends `post_migrate` as the flush does, unless what the signal writes is there unchanged (then it is kept).
Sequences keep counting, as with the flush (`reset_sequences=False`).
A test case that asks for something else (`available_apps`, serialized rollback) and any database other than
PostgreSQL keep Django's own teardown (`reset_sequences` is done at the next test's setup either way).
tests/test_table_emptying.py checks the state left is the flush's.
"""
from __future__ import annotations

from django.core.management.sql import emit_post_migrate_signal
from django.db import connections, transaction
from django.test import TransactionTestCase

DJANGO_FIXTURE_TEARDOWN = TransactionTestCase._fixture_teardown


def tables_with_rows(database: str = "default") -> list[str]:
    """The project's tables (Django's, as the flush names them) that hold at least one row, in one query."""
    connection = connections[database]
    tables = sorted(connection.introspection.django_table_names(only_existing=True, include_views=False))
    if not tables:
        return []
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(table)})" for table in tables)
    with connection.cursor() as cursor:
        cursor.execute(probes, tables)
        return [row[0] for row in cursor.fetchall()]


# {database: {table: rows}}: what `post_migrate` left in each table it fills, read once after the first emptying.
POST_MIGRATE_ROWS: dict[str, dict[str, list[tuple]]] = {}


def rows_of(database: str, tables: list[str]) -> dict[str, list[tuple]]:
    connection = connections[database]
    with connection.cursor() as cursor:
        rows = {}
        for table in tables:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY 1")
            rows[table] = cursor.fetchall()
        return rows


def empty_written_tables(database: str = "default") -> list[str]:
    """DELETE every row of the tables that hold any, in one transaction, then send `post_migrate` as Django's
    flush does; returns the tables emptied.

    The tables `post_migrate` fills (content types, permissions, the role groups and their permissions) are left
    alone, and the signal not sent, when they hold exactly the rows it left the first time (the signal would
    delete nothing and write nothing but new ids); any change there, and they are emptied and refilled."""
    connection = connections[database]
    quote = connection.ops.quote_name
    with transaction.atomic(using=database):
        tables = tables_with_rows(database)
        kept = POST_MIGRATE_ROWS.get(database)
        refill = kept is None or set(kept) - set(tables) or rows_of(database, list(kept)) != kept
        if not refill:
            tables = [table for table in tables if table not in kept]
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            for table in tables:
                cursor.execute(f"DELETE FROM {quote(table)}")
    if refill and connection.introspection.django_table_names(only_existing=True, include_views=False):
        emit_post_migrate_signal(0, False, database)
        filled = tables_with_rows(database)
        POST_MIGRATE_ROWS[database] = rows_of(database, filled)
    return tables


def fixture_teardown(test_case: TransactionTestCase) -> None:
    """`TransactionTestCase._fixture_teardown` for the suite: `empty_written_tables` on PostgreSQL when the test
    case asks for Django's plain flush; Django's own teardown otherwise."""
    plain = test_case.available_apps is None and not test_case.serialized_rollback
    names = test_case._databases_names(include_mirrors=False)
    if not plain or any(connections[name].vendor != "postgresql" for name in names):
        DJANGO_FIXTURE_TEARDOWN(test_case)
        return
    for name in names:
        empty_written_tables(name)


def install() -> None:
    TransactionTestCase._fixture_teardown = fixture_teardown  # type: ignore[method-assign]


def uninstall() -> None:
    TransactionTestCase._fixture_teardown = DJANGO_FIXTURE_TEARDOWN  # type: ignore[method-assign]
