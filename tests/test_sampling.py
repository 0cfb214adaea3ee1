"""Deterministic sampling: same seed, same items on any database; gold label proportions kept (HUME: 20–50 items)."""
from __future__ import annotations

from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tasks_app.models import Item, Task
from tasks_app.sampling import allocate, sample_rank, sample_task
from tests.import_samples import cli_import, jsonl, write

pytestmark = pytest.mark.django_db


def labelled(tmp_path: Path, name: str, labels: dict[str, int], kind: str = "classification") -> Task:
    records, n = [], 0
    for label, count in labels.items():
        for _ in range(count):
            n += 1
            if kind == "pairwise":
                records.append({"id": f"i{n}", "context": f"c{n}", "a": "x", "b": "y", "preferred": label})
            else:
                records.append({"id": f"i{n}", "text": f"text {n}", "label": label})
    cli_import(write(tmp_path / f"{name}.jsonl", jsonl(records)), name, kind)
    return Task.objects.get(name=name)


def sampled(task: Task) -> list[str]:
    return sorted(Item.objects.filter(task=task, in_sample=True).values_list("external_id", flat=True))


def sample(name: str, size: int, seed: int) -> str:
    out = StringIO()
    call_command("sample_task", name, size=size, seed=seed, stdout=out)
    return out.getvalue()


def test_the_same_seed_picks_the_same_items(tmp_path: Path) -> None:
    first = labelled(tmp_path, "A", {"pos": 60, "neg": 40})
    second = labelled(tmp_path, "B", {"pos": 60, "neg": 40})  # same items, another task
    sample("A", 20, 7)
    sample("B", 20, 7)
    assert sampled(first) == sampled(second)
    sample("A", 20, 7)
    assert sampled(first) == sampled(second)


def test_seed_7_picks_these_items_on_every_database_and_machine(tmp_path: Path) -> None:
    """Pinned values (computed apart with hashlib): the subset depends only on the seed and the external ids."""
    task = labelled(tmp_path, "A", {"pos": 60, "neg": 40})
    sample("A", 10, 7)
    assert sample_rank(7, "i1") == "481e74b6fe970022b755d9769764cec5a83a4b1fcf08ae8be5397552e542a4fd"
    assert sampled(task) == ["i10", "i17", "i31", "i5", "i56", "i6", "i65", "i66", "i79", "i80"]


def test_a_different_seed_picks_a_different_subset(tmp_path: Path) -> None:
    task = labelled(tmp_path, "A", {"pos": 60, "neg": 40})
    sample("A", 20, 1)
    one = sampled(task)
    sample("A", 20, 2)
    assert sampled(task) != one and len(sampled(task)) == 20


def test_classification_samples_keep_the_label_proportions(tmp_path: Path) -> None:
    task = labelled(tmp_path, "A", {"pos": 70, "neg": 20, "neu": 10})
    out = sample("A", 20, 3)
    gold = dict(Item.objects.filter(task=task).values_list("external_id", "gold__value"))
    assert Counter(gold[i] for i in sampled(task)) == {"pos": 14, "neg": 4, "neu": 2}
    assert "sampled 20 items of task 'A' with seed 3 (stratified by gold label)" in out
    assert out.splitlines()[1:] == ["  neg      4 of 20", "  neu      2 of 10", "  pos     14 of 70"]


def test_pairwise_samples_are_stratified_by_the_preferred_answer(tmp_path: Path) -> None:
    task = labelled(tmp_path, "P", {"a": 30, "b": 15, "tie": 5}, kind="pairwise")
    sample("P", 10, 5)
    gold = dict(Item.objects.filter(task=task).values_list("external_id", "gold__value"))
    assert Counter(gold[i] for i in sampled(task)) == {"a": 6, "b": 3, "tie": 1}


def test_a_rare_label_still_gets_one_item() -> None:
    assert allocate({"a": 97, "b": 2, "c": 1}, 10) == {"a": 8, "b": 1, "c": 1}
    assert allocate({"a": 97, "b": 2, "c": 1}, 2) == {"a": 2, "b": 0, "c": 0}  # too small for every label


def test_allocation_uses_largest_remainders_and_breaks_ties_by_label() -> None:
    assert allocate({"x": 1, "y": 1, "z": 1}, 2) == {"x": 1, "y": 1, "z": 0}
    assert allocate({"a": 5, "b": 3, "c": 2}, 7) == {"a": 4, "b": 2, "c": 1}  # quotas 3.5, 2.1, 1.4
    assert allocate({"a": 5, "b": 3}, 50) == {"a": 5, "b": 3}


def test_kinds_without_labels_are_sampled_uniformly(tmp_path: Path) -> None:
    records = [{"id": f"s{i}", "sentence1": f"a{i}", "sentence2": f"b{i}", "score": i % 6} for i in range(40)]
    cli_import(write(tmp_path / "s.jsonl", jsonl(records)), "S", "sts")
    out = sample("S", 25, 11)
    assert len(sampled(Task.objects.get(name="S"))) == 25
    assert "(uniform)" in out and "all items     25 of 40" in out


def test_sampling_marks_the_pool_and_records_size_and_seed(tmp_path: Path) -> None:
    task = labelled(tmp_path, "A", {"pos": 30, "neg": 30})
    sample("A", 30, 9)
    sample("A", 12, 10)
    task.refresh_from_db()
    assert (task.sample_size, task.sample_seed) == (12, 10)
    assert Item.objects.filter(task=task, in_sample=True).count() == 12
    assert sorted(Item.objects.filter(task=task).in_pool().values_list("external_id", flat=True)) == sampled(task)


def test_a_sample_larger_than_the_task_takes_every_item(tmp_path: Path) -> None:
    task = labelled(tmp_path, "A", {"pos": 3, "neg": 2})
    sample("A", 50, 1)
    task.refresh_from_db()
    assert task.sample_size == 5 and len(sampled(task)) == 5


def test_clear_returns_every_item_to_the_pool(tmp_path: Path) -> None:
    task = labelled(tmp_path, "A", {"pos": 5, "neg": 5})
    sample("A", 4, 1)
    call_command("sample_task", "A", clear=True, stdout=StringIO())
    task.refresh_from_db()
    assert task.sample_size is None and not sampled(task)
    assert Item.objects.filter(task=task).in_pool().count() == 10


def test_bad_sampling_requests_are_refused(tmp_path: Path) -> None:
    labelled(tmp_path, "A", {"pos": 5})
    with pytest.raises(CommandError, match="no task named 'Nope'"):
        sample("Nope", 5, 1)
    with pytest.raises(CommandError, match="at least 1"):
        sample("A", 0, 1)
    Task.objects.create(name="Empty", kind="sts", language="eng-Latn")
    with pytest.raises(CommandError, match="has no items"):
        sample("Empty", 5, 1)


def test_items_without_gold_form_their_own_stratum(tmp_path: Path) -> None:
    records = [{"id": f"g{i}", "text": f"g{i}", "label": "x"} for i in range(6)]
    records += [{"id": f"n{i}", "text": f"n{i}"} for i in range(4)]
    cli_import(write(tmp_path / "m.jsonl", jsonl(records)), "M", "classification", labels="x,y")
    result = sample_task(Task.objects.get(name="M"), 5, 4)
    assert result.distribution == {"(no gold)": (2, 4), "x": (3, 6)}
