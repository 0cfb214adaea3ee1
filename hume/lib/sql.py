"""Raw-SQL helpers shared by the apps: what the ORM does too slowly for bulk rows.

`insert_rows` writes many prepared rows in one stream: dataset imports (items, gold) and retrieval imports
(documents, queries, qrels, run entries, pooled items) use it. It knows no model of its own: the caller hands in
the model class and the field names. `values_with_json` reads rows whose last column is JSON and decodes the
JSON of all of them in one `json.loads`, not once a row through Django's field converters.
"""
from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.db.models import Model, QuerySet, TextField
from django.db.models.functions import Cast


def insert_rows(model: type[Model], fields: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """Insert rows whose values each field has already prepared: COPY on PostgreSQL, executemany elsewhere.

    Why not bulk_create: building and preparing a model instance per row was most of an import's CPU time
    (100,000 items), and on PostgreSQL one COPY stream costs the server far less than per-row INSERTs. Item and
    ItemGold have no signals or save() logic that bulk_create would have honoured either.
    """
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    columns = ", ".join(quote(model._meta.get_field(name).column) for name in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})", rows)


def values_with_json(rows: QuerySet, *fields: str, json_field: str) -> list[tuple[Any, ...]]:
    """`rows.values_list(*fields, json_field)`, the JSON column read as text and decoded in one `json.loads` of
    all rows (a SQL NULL as None): Django's JSONField converter, called once a row, cost a model run's start
    more than reading the rows (20,000 payloads and 20,000 gold values, docs/models-in-app.md)."""
    read = list(rows.values_list(*fields, Cast(json_field, output_field=TextField())))
    decoded = json.loads("[" + ",".join("null" if row[-1] is None else row[-1] for row in read) + "]")
    return [(*row[:-1], value) for row, value in zip(read, decoded, strict=True)]
