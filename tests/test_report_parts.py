"""A report is also computed per batch and per language, from the same single read of the answers."""
from __future__ import annotations

import pytest

from annotation.models import Batch
from tests.report_builders import answers_from_columns, build_task, cli_report, import_answers

pytestmark = pytest.mark.django_db


def test_each_batch_and_each_language_gets_its_own_numbers() -> None:
    task = build_task("classification", "two-rounds", [{"text": f"t{i}", "label": "a"} for i in range(1, 7)],
                      labels=["a", "b"])
    english = Batch.objects.create(task=task, name="round-1", language="eng-Latn", overlap=2)
    danish = Batch.objects.create(task=task, name="runde-2", language="dan-Latn", overlap=2)
    first, second = ["1", "2", "3"], ["4", "5", "6"]
    import_answers(task, answers_from_columns({"ann1": ["a", "a", "a"], "ann2": ["a", "a", "b"]}, first), english)
    import_answers(task, answers_from_columns({"ann3": ["b", "b", "a"], "ann4": ["b", "a", "a"]}, second), danish)
    import_answers(task, answers_from_columns({"ann1": ["a"]}, ["6"]))  # outside any batch: the task's language

    doc = cli_report(task)

    batches = {part["batch"]: part for part in doc["by_batch"]}
    assert set(batches) == {"round-1", "runde-2"}
    assert batches["round-1"]["language"] == "eng-Latn" and batches["round-1"]["n_answers"] == 6
    assert batches["round-1"]["human"]["main_score"] == 1.0  # majority "a" everywhere (tie → "a")
    assert batches["runde-2"]["human"]["main_score"] == pytest.approx(2 / 3)  # t4 "b" (wrong), t5 tie → "a", t6 "a"
    languages = {part["language"]: part for part in doc["by_language"]}
    assert set(languages) == {"eng-Latn", "dan-Latn"}
    assert languages["eng-Latn"]["n_answers"] == 7 and languages["dan-Latn"]["n_answers"] == 6
    assert doc["n_answers"] == 13
    assert "disagreement" not in batches["round-1"] and "excluded" not in languages["dan-Latn"]


def test_one_batch_in_the_task_language_reuses_the_whole_task_numbers() -> None:
    task = build_task("classification", "one-round", [{"text": f"t{i}", "label": "a"} for i in range(1, 4)],
                      labels=["a", "b"])
    batch = Batch.objects.create(task=task, name="only", language="eng-Latn", overlap=2)
    import_answers(task, answers_from_columns({"ann1": ["a", "b", "a"], "ann2": ["a", "a", "a"]}), batch)

    doc = cli_report(task)

    (part,) = doc["by_batch"]
    (language,) = doc["by_language"]
    assert part["agreement"] == language["agreement"] == doc["agreement"]
    assert part["human"] == doc["human"] and language["language"] == "eng-Latn"
