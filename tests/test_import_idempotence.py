"""Importing the same file again changes nothing; gold never changes silently; a task keeps one configuration."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.core.management.base import CommandError
from django.db import connection

from tasks_app.models import Item, ItemGold, Task
from tasks_app.sampling import sample_task
from tests.conftest import require_postgres
from tests.import_samples import SAMPLES, cli_import, counts, gold_by_id, jsonl, write

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", SAMPLES)
def test_reimporting_the_same_file_changes_nothing(kind: str, tmp_path: Path) -> None:
    options, records, _ = SAMPLES[kind]
    path = write(tmp_path / "data.jsonl", jsonl(records))
    cli_import(path, "T", kind, **options)
    rows = list(Item.objects.order_by("pk").values_list("pk", "uid", "external_id", "position", "payload"))
    gold = list(ItemGold.objects.order_by("pk").values_list("pk", "value"))

    out = cli_import(path, "T", kind, **options)

    assert out.splitlines()[:2] == [f"task exists: 'T' ({kind}, eng-Latn)",
                                    f"0 added (0 with gold), {len(records)} unchanged"]
    assert list(Item.objects.order_by("pk").values_list("pk", "uid", "external_id", "position", "payload")) == rows
    assert list(ItemGold.objects.order_by("pk").values_list("pk", "value")) == gold


def test_a_csv_and_a_jsonl_of_the_same_items_are_the_same_items(tmp_path: Path) -> None:
    line = b'{"id": "1", "sentence1": "a", "sentence2": "b", "score": 3}\n'
    cli_import(write(tmp_path / "a.jsonl", line), "T", "sts")
    out = cli_import(write(tmp_path / "a.csv", b"id,sentence1,sentence2,score\n1,a,b,3\n"), "T", "sts")
    assert "0 added (0 with gold), 1 unchanged" in out


def test_new_lines_are_added_after_the_existing_items(tmp_path: Path) -> None:
    first = [{"id": "a", "text": "one"}, {"id": "b", "text": "two"}]
    cli_import(write(tmp_path / "v1.jsonl", jsonl(first)), "T", "classification", labels="x,y")
    out = cli_import(write(tmp_path / "v2.jsonl", jsonl([{"id": "c", "text": "three"}, *first])), "T",
                     "classification")
    assert "1 added (0 with gold), 2 unchanged" in out
    assert list(Item.objects.order_by("position").values_list("external_id", "position")) == [
        ("a", 0), ("b", 1), ("c", 2)]


def test_a_changed_gold_is_refused_unless_update_gold(tmp_path: Path) -> None:
    cli_import(write(tmp_path / "v1.jsonl", jsonl([{"id": "a", "text": "one", "label": "x"}])), "T",
               "classification", labels="x,y")
    changed = write(tmp_path / "v2.jsonl", jsonl([{"id": "a", "text": "one", "label": "y"}]))
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(changed, "T", "classification")
    assert 'v2.jsonl line 1, field "label": the gold "y" differs from the stored gold "x"' in str(failure.value)
    assert counts() == before and gold_by_id(Task.objects.get()) == {"a": "x"}

    out = cli_import(changed, "T", "classification", update_gold=True)
    assert "gold updated on 1 items" in out
    assert gold_by_id(Task.objects.get()) == {"a": "y"}


def test_update_gold_also_adds_and_removes_gold(tmp_path: Path) -> None:
    first = jsonl([{"id": "a", "text": "one", "label": "x"}, {"id": "b", "text": "2"}])
    cli_import(write(tmp_path / "v1.jsonl", first), "T", "classification", labels="x,y")
    swapped = jsonl([{"id": "a", "text": "one"}, {"id": "b", "text": "2", "label": "y"}])
    with pytest.raises(CommandError):
        cli_import(write(tmp_path / "v2.jsonl", swapped), "T", "classification")
    cli_import(tmp_path / "v2.jsonl", "T", "classification", update_gold=True)
    assert gold_by_id(Task.objects.get()) == {"b": "y"}


def test_an_id_reused_for_different_content_is_refused(tmp_path: Path) -> None:
    cli_import(write(tmp_path / "v1.jsonl", jsonl([{"id": "a", "text": "one"}])), "T", "classification", labels="x")
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "v2.jsonl", jsonl([{"id": "a", "text": "edited"}])), "T", "classification")
    assert """v2.jsonl line 1, field "id": id 'a' already exists in task 'T' with different content""" in str(
        failure.value)
    assert Item.objects.get().payload == {"text": "one"}


def test_known_content_under_another_id_is_refused(tmp_path: Path) -> None:
    cli_import(write(tmp_path / "v1.jsonl", jsonl([{"id": "a", "text": "one"}])), "T", "classification", labels="x")
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "v2.jsonl", jsonl([{"id": "b", "text": "one"}])), "T", "classification")
    assert """v2.jsonl line 1, field "id": this content was imported before with id 'a'""" in str(failure.value)


@pytest.mark.parametrize(("options", "field"), [
    ({"kind": "sts"}, "kind"),
    ({"language": "dan-Latn"}, "language"),
    ({"labels": "x,y,z"}, "labels"),
])
def test_a_reimport_cannot_change_the_task_configuration(tmp_path: Path, options: dict, field: str) -> None:
    path = write(tmp_path / "d.jsonl", jsonl([{"id": "a", "text": "one"}]))
    cli_import(path, "T", "classification", labels="x,y")
    args = {"kind": "classification", "language": "eng-Latn", **options}
    with pytest.raises(CommandError) as failure:
        cli_import(path, "T", **args)
    assert f'd.jsonl, option "{field}": task \'T\' already exists with {field}' in str(failure.value)
    assert Task.objects.get().kind == "classification" and Task.objects.get().labels == ["x", "y"]


def test_a_reimport_may_update_instructions_and_mteb_metadata(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", jsonl([{"id": "a", "text": "one"}]))
    cli_import(path, "T", "classification", labels="x,y")
    out = cli_import(path, "T", "classification", instructions=str(write(tmp_path / "i.md", b"Pick one.")),
                     dataset_revision="r2")
    assert "updated: instructions, dataset_revision" in out
    task = Task.objects.get()
    assert (task.instructions, task.dataset_revision) == ("Pick one.", "r2")


def test_new_items_of_a_sampled_task_are_reported_outside_the_sample(tmp_path: Path) -> None:
    records = [{"id": str(i), "text": f"t{i}", "label": "x"} for i in range(10)]
    cli_import(write(tmp_path / "v1.jsonl", jsonl(records)), "T", "classification")
    sample_task(Task.objects.get(), 5, seed=1)
    out = cli_import(write(tmp_path / "v2.jsonl", jsonl([*records, {"id": "new", "text": "n", "label": "x"}])),
                     "T", "classification")
    assert "warning: the task has a sample of 5 items and the 1 new items are not in it" in out
    assert not Item.objects.get(external_id="new").in_sample


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_imports_of_one_file_store_it_once(tmp_path: Path) -> None:
    """Two real connections import the same new file at once: one creates, the other waits or is refused cleanly."""
    require_postgres()
    path = write(tmp_path / "d.jsonl", jsonl([{"id": str(i), "text": f"t{i}", "label": "x"} for i in range(3000)]))
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def run() -> None:
        try:
            barrier.wait()
            outcomes.append(cli_import(path, "T", "classification", labels="x,y"))
        except CommandError as exc:
            outcomes.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert counts() == (1, 3000, 3000)
    created = [o for o in outcomes if o.startswith("created task 'T'")]
    others = [o for o in outcomes if o not in created]
    assert len(created) == 1 and len(others) == 1
    assert "0 added (0 with gold), 3000 unchanged" in others[0] or "another import of this task" in others[0]
