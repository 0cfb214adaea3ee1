"""The suite's end of a transactional test (tests/table_emptying.py) leaves what Django's flush leaves: every table
empty but the rows `post_migrate` makes (content types, permissions, the role groups with their permissions)."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.test import TransactionTestCase

from annotation.models import Annotation, Annotator
from tasks_app.models import Item, ItemGold, Task
from tests.batch_helpers import make_batch, make_task
from tests.conftest import make_annotator, require_postgres
from tests.table_emptying import empty_written_tables, fixture_teardown, tables_with_rows

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def database_state() -> dict[str, object]:
    """Every model's row count, and the rows `post_migrate` makes, by their natural keys (ids keep counting)."""
    counts = {model._meta.db_table: model._default_manager.count() for model in apps.get_models()}
    return {
        "counts": counts,
        "content_types": sorted(ContentType.objects.values_list("app_label", "model")),
        "permissions": sorted(Permission.objects.values_list("content_type__app_label", "codename")),
        "groups": {group.name: sorted(group.permissions.values_list("codename", flat=True))
                   for group in Group.objects.all()},
    }


def write_rows_without_groups(alice: Annotator) -> None:
    """Rows in tables linked by foreign keys both ways: users, annotators, tasks, items, gold, a batch, answers."""
    task = make_task("Emptying", n=4)
    make_batch(task, [alice])
    item = Item.objects.filter(task=task).first()
    Annotation.objects.create(item=item, annotator=alice, value="positive")


def write_rows(alice: Annotator) -> None:
    write_rows_without_groups(alice)
    Group.objects.get(name="annotator").permissions.add(Permission.objects.first())  # a changed role group


def test_the_state_left_is_the_state_djangos_flush_leaves(alice: Annotator) -> None:
    require_postgres()
    write_rows(alice)
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False)
    flushed = database_state()
    assert flushed["counts"][Task._meta.db_table] == 0
    assert flushed["groups"]["annotator"] == []
    assert flushed["groups"]["admin"] and flushed["content_types"] and flushed["permissions"]

    write_rows(make_annotator("alice", {"eng-Latn": "native"}))
    written = set(tables_with_rows())
    assert {Task._meta.db_table, Item._meta.db_table, ItemGold._meta.db_table, Annotation._meta.db_table} <= written

    emptied = empty_written_tables()

    assert set(emptied) == written
    assert database_state() == flushed


def test_unchanged_rows_of_post_migrate_are_kept_and_the_signal_not_sent(alice: Annotator) -> None:
    """A test that wrote no content type, permission or group: those rows stay as they are (same ids), the rest is
    emptied, and the state is the flush's; a changed group brings the signal back."""
    require_postgres()
    empty_written_tables()  # the rows post_migrate leaves, as the suite's teardown reads them
    flushed = database_state()
    content_type_ids = sorted(ContentType.objects.values_list("pk", flat=True))
    write_rows_without_groups(make_annotator("alice", {"eng-Latn": "native"}))

    emptied = empty_written_tables()

    assert Task._meta.db_table in emptied and ContentType._meta.db_table not in emptied
    assert Group._meta.db_table not in emptied
    assert sorted(ContentType.objects.values_list("pk", flat=True)) == content_type_ids
    assert database_state() == flushed

    Group.objects.get(name="admin").permissions.clear()
    emptied = empty_written_tables()
    assert Group._meta.db_table in emptied and ContentType._meta.db_table in emptied
    assert database_state() == flushed  # the signal gave the admins their permissions back


def test_the_teardown_keeps_djangos_own_when_the_test_case_asks_for_more() -> None:
    """A test case with available_apps (or serialized rollback) gets Django's teardown: its flush sends no
    `post_migrate`, so no role group comes back; the suite's plain teardown sends it, as Django's plain flush does."""
    require_postgres()
    assert TransactionTestCase._fixture_teardown is fixture_teardown  # installed for the suite (tests/conftest.py)

    class Plain(TransactionTestCase):
        def runTest(self) -> None:
            pass

    class AsksForSomeApps(Plain):
        available_apps = ["tasks_app"]

    make_task("Before", n=1)
    fixture_teardown(AsksForSomeApps())
    assert Task.objects.count() == 0
    assert not Group.objects.exists()

    make_task("Between", n=1)
    fixture_teardown(Plain())
    assert Task.objects.count() == 0
    assert sorted(Group.objects.values_list("name", flat=True)) == ["admin", "annotator", "researcher"]
