"""A participant's request reads its participant with the study link, batch, task and annotator in one
prepared statement (annotation/core/rawsql.py), the way the annotator loop reads its seat.

Every page of a crowd study needs all five rows. Built by the ORM (select_related over four joins), that one
query cost more Python than the rest of a submit's statements together on the 2-core machine (docs/crowd.md,
"Where a participant's request goes"); here its text is built once per process and PostgreSQL keeps its plan.
"""
from __future__ import annotations

from functools import cache

from annotation.core import rawsql
from annotation.core.models import Annotator, Batch
from annotation.crowd.models import Participant, StudyLink
from tasks_app.models import Item, Task

JOINED = (Participant, StudyLink, Batch, Task, Annotator)


@cache
def _sql() -> str:
    table = {model: model._meta.db_table for model in JOINED}
    selected = ", ".join(rawsql.columns(model, alias) for model, alias in zip(JOINED, "plbta", strict=True))
    return (f"SELECT {selected} FROM {table[Participant]} p "
            f"JOIN {table[StudyLink]} l ON l.id = p.link_id JOIN {table[Batch]} b ON b.id = l.batch_id "
            f"JOIN {table[Task]} t ON t.id = b.task_id JOIN {table[Annotator]} a ON a.id = p.annotator_id "
            "WHERE p.id = %(participant)s AND l.id = %(link)s AND l.token = %(token)s")


def participant_of(participant_id: int, link_id: int, token: str) -> Participant | None:
    """The participant `participant_id` of the link `link_id` whose token is `token`, with `.link.batch.task`,
    `.annotator` and `.check_item` (its task set to the study's) loaded; None when there is no such row."""
    found = rawsql.one(_sql(), {"participant": participant_id, "link": link_id, "token": token})
    if found is None:
        return None
    parts, start = [], 0
    for model in JOINED:
        parts.append(rawsql.instance(model, found[start:start + rawsql.width(model)]))
        start += rawsql.width(model)
    participant, link, batch, task, annotator = parts
    batch.task, link.batch, participant.link, participant.annotator = task, batch, link, annotator
    if participant.check_item_id is not None:  # a check item is one of the study task's items
        item = Item.objects.get(pk=participant.check_item_id)
        item.task, participant.check_item = task, item
    return participant
