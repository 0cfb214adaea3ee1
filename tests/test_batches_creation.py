"""Making batches: pool items in task order, the language rule and its override, HUME's preset, bulk per language."""
from __future__ import annotations

import pytest

from annotation.core.batches import (
    AssignmentProblem,
    BatchSpec,
    assign,
    create_batch,
    create_language_batches,
    hume_overlap,
    multilingual_group,
)
from annotation.models import BatchAssignee, BatchItem

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from .conftest import make_annotator


def test_a_batch_gets_one_row_per_item_in_task_order(alice):
    task = make_task(n=4)
    batch = make_batch(task, [alice])
    rows = list(BatchItem.objects.filter(batch=batch).order_by("position").values_list("position", "item__position"))
    assert rows == [(1, 0), (2, 1), (3, 2), (4, 3)]


def test_a_sampled_task_contributes_only_its_sample(alice):
    task = make_task(n=6, sample=[1, 4])
    batch = make_batch(task, [alice])
    assert list(BatchItem.objects.filter(batch=batch).values_list("item__external_id", flat=True)) == ["1", "4"]


def test_only_annotators_with_the_batch_language_can_be_assigned(alice, bob):
    task = make_task(n=1)
    with pytest.raises(AssignmentProblem) as problem:
        make_batch(task, [alice, bob])
    assert problem.value.field == "annotators"
    assert "bob" in problem.value.message and "eng-Latn" in problem.value.message
    assert not BatchAssignee.objects.exists()


def test_an_override_reason_assigns_anyway_and_is_recorded_on_the_mismatched_assignee_only(alice, bob, carol):
    task = make_task(n=1)
    batch, _ = create_batch(BatchSpec(task=task), annotators=[alice, bob],
                            override_reason="bob reads English fluently; profile outdated", created_by=carol)
    reasons = dict(BatchAssignee.objects.filter(batch=batch).values_list("annotator__user__username",
                                                                         "override_reason"))
    assert reasons == {"alice": "", "bob": "bob reads English fluently; profile outdated"}
    assert set(BatchAssignee.objects.values_list("assigned_by__username", flat=True)) == {"carol"}


def test_the_hume_preset_gives_english_two_annotators_and_other_languages_one():
    assert (hume_overlap("eng-Latn"), hume_overlap("dan-Latn"), hume_overlap("ara-Arab")) == (2, 1, 1)


def test_a_batch_without_overlap_uses_the_preset_for_its_language(alice):
    english = make_batch(make_task(name="En", n=1), [alice], overlap=None)
    danish = make_batch(make_task(name="Da", n=1, language="dan-Latn"), [alice], overlap=None)
    assert (english.overlap, danish.overlap, english.language, danish.language) == (2, 1, "eng-Latn", "dan-Latn")


def test_creating_the_same_batch_twice_returns_it_and_adds_new_assignees(alice, db):
    erin = make_annotator("erin", {"eng-Latn": "fluent"})
    task = make_task(n=2)
    first, created = create_batch(BatchSpec(task=task, name="round 1"), annotators=[alice])
    again, created_again = create_batch(BatchSpec(task=task, name="round 1", overlap=3), annotators=[alice, erin])
    assert (created, created_again, again.pk, again.overlap) == (True, False, first.pk, 2)
    assert BatchItem.objects.filter(batch=first).count() == 2
    assert set(first.assignees.values_list("user__username", flat=True)) == {"alice", "erin"}


def test_a_bad_language_code_is_refused_by_name(db):
    with pytest.raises(AssignmentProblem) as problem:
        create_batch(BatchSpec(task=make_task(n=1), language="English"))
    assert (problem.value.field, "'English'" in problem.value.message) == ("language", True)


def test_bulk_creation_makes_one_batch_per_language_with_the_speakers_assigned(alice, bob):
    tasks = [make_task(name=f"SIB200 {lang}", n=2, language=lang, mteb="SIB200Classification")
             for lang in ("eng-Latn", "dan-Latn", "ara-Arab")]
    make_task(name="Unrelated", n=1)
    group = multilingual_group(tasks[0])
    made = create_language_batches(group)
    summary = sorted((b.language, b.overlap, sorted(b.assignees.values_list("user__username", flat=True)), created)
                     for b, created in made)
    assert summary == [("ara-Arab", 1, ["bob"], True), ("dan-Latn", 1, ["alice"], True),
                       ("eng-Latn", 2, ["alice"], True)]
    assert [created for _, created in create_language_batches(group)] == [False, False, False]


def test_bulk_creation_never_assigns_inactive_or_llm_annotators(alice):
    make_annotator("gpt", {"eng-Latn": "fluent"}, agent="llm")
    gone = make_annotator("gone", {"eng-Latn": "native"})
    gone.active = False
    gone.save()
    [(batch, _)] = create_language_batches([make_task(n=1)])
    assert list(batch.assignees.values_list("user__username", flat=True)) == ["alice"]


def test_assigning_the_same_annotator_twice_keeps_one_assignment(alice):
    batch = make_batch(make_task(n=1), [alice])
    assign(batch, [alice])
    assert BatchAssignee.objects.filter(batch=batch).count() == 1
