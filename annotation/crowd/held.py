"""A participant's request reads its participant with the study link, batch, task and annotator in one
prepared statement (annotation/core/rawsql.py), the way the annotator loop reads its seat; an arrival reads the
link with its batch and task, and sweeps the overdue participants, the same way.

Every page of a crowd study needs all five rows. Built by the ORM (select_related over four joins), that one
query cost more Python than the rest of a submit's statements together on the 2-core machine (docs/crowd.md,
"Where a participant's request goes"); here its text is built once per process and PostgreSQL keeps its plan.
The arrival's link, its sweep (`overdue_exists`, `deactivate_overdue_completed`) and its look for the platform id
(`participant_with_platform_id`) were a third of a new participant's Python as ORM queries, though the sweep
finds nobody on almost every arrival and the look nobody on a first one.
"""
from __future__ import annotations

from datetime import datetime
from functools import cache

from django.db import connection

from annotation.core import rawsql
from annotation.core.models import Annotator, Batch
from annotation.crowd.models import Participant, StudyLink
from tasks_app.models import Item, Task

JOINED = (Participant, StudyLink, Batch, Task, Annotator)
LINK_JOINED = (StudyLink, Batch, Task)


@cache
def _sql() -> str:
    table = {model: model._meta.db_table for model in JOINED}
    selected = ", ".join(rawsql.columns(model, alias) for model, alias in zip(JOINED, "plbta", strict=True))
    return (f"SELECT {selected} FROM {table[Participant]} p "
            f"JOIN {table[StudyLink]} l ON l.id = p.link_id "
            f"JOIN {table[Batch]} b ON b.id = COALESCE(p.batch_id, l.batch_id) "
            f"JOIN {table[Task]} t ON t.id = b.task_id JOIN {table[Annotator]} a ON a.id = p.annotator_id "
            "WHERE p.id = %(participant)s AND l.id = %(link)s AND l.token = %(token)s")


def participant_of(participant_id: int, link_id: int, token: str) -> Participant | None:
    """The participant `participant_id` of the link `link_id` whose token is `token`, with `.link.batch.task`,
    `.annotator` and `.check_item` (its task set to the study's) loaded; None when there is no such row.
    `.link.batch` is the participant's batch (`Participant.batch`; the link's for a link that never moved), so
    every page of their run works in the batch they work in."""
    found = rawsql.one(_sql(), {"participant": participant_id, "link": link_id, "token": token})
    if found is None:
        return None
    participant, link, batch, task, annotator = _instances(JOINED, found)
    batch.task, link.batch, participant.link, participant.annotator = task, batch, link, annotator
    if participant.check_item_id is not None:  # a check item is one of the study task's items
        item = Item.objects.get(pk=participant.check_item_id)
        item.task, participant.check_item = task, item
    return participant


def _instances(models: tuple, values: tuple) -> list:
    parts, start = [], 0
    for model in models:
        parts.append(rawsql.instance(model, values[start:start + rawsql.width(model)]))
        start += rawsql.width(model)
    return parts


@cache
def _link_sql() -> str:
    table = {model: model._meta.db_table for model in LINK_JOINED}
    selected = ", ".join(rawsql.columns(model, alias) for model, alias in zip(LINK_JOINED, "lbt", strict=True))
    return (f"SELECT {selected} FROM {table[StudyLink]} l JOIN {table[Batch]} b ON b.id = l.batch_id "
            f"JOIN {table[Task]} t ON t.id = b.task_id WHERE l.token = %(token)s")


def link_of(token: str) -> StudyLink | None:
    """The study link of `token` with `.batch.task` loaded; None when there is none."""
    found = rawsql.one(_link_sql(), {"token": token})
    if found is None:
        return None
    link, batch, task = _instances(LINK_JOINED, found)
    batch.task, link.batch = task, batch
    return link


@cache
def _platform_id_sql() -> str:
    return (f"SELECT {rawsql.columns(Participant, 'p')} FROM {Participant._meta.db_table} p "
            "WHERE p.link_id = %(link)s AND p.platform_id = %(platform_id)s")


def participant_with_platform_id(link: StudyLink, platform_id: str) -> Participant | None:
    """The participant of `link` with this platform id (`.link` set to `link`); None on a first arrival."""
    found = rawsql.one(_platform_id_sql(), {"link": link.pk, "platform_id": platform_id})
    if found is None:
        return None
    participant = rawsql.instance(Participant, found)
    participant.link = link
    return participant


@cache
def _overdue_sql(stages: tuple[str, ...]) -> str:
    running = ", ".join(f"'{stage}'" for stage in stages)
    return (f"SELECT 1 FROM {Participant._meta.db_table} WHERE stage IN ({running}) AND deadline < %(now)s "
            "LIMIT 1")


@cache
def _deactivate_sql() -> str:
    return (f"UPDATE {Annotator._meta.db_table} SET active = %(inactive)s WHERE active = %(active)s AND id IN "
            f"(SELECT annotator_id FROM {Participant._meta.db_table} WHERE stage = "
            f"'{Participant.Stage.COMPLETED}' AND deadline < %(now)s)")


def overdue_exists(running: tuple[str, ...], now: datetime) -> bool:
    """Whether any participant of any study in a `running` stage is past their deadline (one probe of the index
    on stage and deadline)."""
    return rawsql.one(_overdue_sql(tuple(running)), {"now": _at(now)}) is not None


def deactivate_overdue_completed(now: datetime) -> None:
    """Deactivate the completed participants past their deadline (their time to revise is over)."""
    rawsql.one(_deactivate_sql(), {"now": _at(now), "active": True, "inactive": False})


def _at(now: datetime) -> object:
    """A time as the database compares it (SQLite keeps text: the ORM's own format)."""
    return connection.ops.adapt_datetimefield_value(now)
