"""The assignment engine, one caller at a time: holds, overlap k, submits, skips, flags, revisions.

Concurrency is in test_assignment_concurrency.py; these run on PostgreSQL and SQLite alike.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.core import assignment as engine
from annotation.core.assignment import AssignmentRefused
from annotation.models import Annotation, AnnotationRevision, Annotator, BatchItem, Hold
from tasks_app.core.kinds import ValidationProblem

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from .conftest import make_annotator


@pytest.fixture
def erin(db: None) -> Annotator:
    return make_annotator("erin", {"eng-Latn": "fluent"})


@pytest.fixture
def frank(db: None) -> Annotator:
    return make_annotator("frank", {"eng-Latn": "near-native"})


def item_ids(batch) -> list[int]:
    return list(BatchItem.objects.filter(batch=batch).order_by("position").values_list("item_id", flat=True))


def test_next_item_holds_the_first_item_in_task_order_for_the_batch_hold_time(alice):
    batch = make_batch(make_task(n=3), [alice], hold_seconds=600)
    now = timezone.now()
    item = engine.next_item(alice, batch, now=now)
    assert item.pk == item_ids(batch)[0]
    hold = Hold.objects.get(annotator=alice)
    assert hold.batch_item.item_id == item.pk
    assert hold.expires_at == now + timedelta(seconds=600)


def test_a_reload_returns_the_same_item_and_renews_the_hold(alice):
    batch = make_batch(make_task(n=3), [alice], hold_seconds=600)
    t0 = timezone.now()
    first = engine.next_item(alice, batch, now=t0)
    again = engine.next_item(alice, batch, now=t0 + timedelta(seconds=300))
    assert again.pk == first.pk
    assert Hold.objects.filter(annotator=alice).count() == 1
    assert Hold.objects.get(annotator=alice).expires_at == t0 + timedelta(seconds=900)


def test_with_k_1_two_annotators_get_different_items(alice, erin):
    batch = make_batch(make_task(n=3), [alice, erin], overlap=1)
    assert [engine.next_item(alice, batch).pk, engine.next_item(erin, batch).pk] == item_ids(batch)[:2]


def test_with_k_2_the_third_annotator_gets_the_second_item(alice, erin, frank):
    batch = make_batch(make_task(n=3), [alice, erin, frank], overlap=2)
    ids = item_ids(batch)
    assert [engine.next_item(a, batch).pk for a in (alice, erin, frank)] == [ids[0], ids[0], ids[1]]


def test_next_item_is_none_when_every_item_has_k_holders(alice, erin):
    batch = make_batch(make_task(n=1), [alice, erin], overlap=1)
    engine.next_item(alice, batch)
    assert engine.next_item(erin, batch) is None


def test_an_annotator_never_gets_an_item_they_answered(alice):
    batch = make_batch(make_task(n=2), [alice], overlap=2)
    first = engine.next_item(alice, batch)
    engine.submit_answer(alice, batch, first, "positive")
    second = engine.next_item(alice, batch)
    engine.submit_answer(alice, batch, second, "negative")
    assert second.pk != first.pk
    assert engine.next_item(alice, batch) is None


def test_the_item_handed_out_carries_no_gold(alice):
    batch = make_batch(make_task(n=1), [alice])
    item = engine.next_item(alice, batch)
    assert item.payload == {"text": "SentimentEng text 0"}
    assert "GOLD" not in str(item.payload)


def test_an_expired_hold_returns_the_item_to_the_pool(alice, erin):
    batch = make_batch(make_task(n=2), [alice, erin], overlap=1, hold_seconds=60)
    t0 = timezone.now()
    taken = engine.next_item(alice, batch, now=t0)
    assert engine.next_item(erin, batch, now=t0 + timedelta(seconds=30)).pk != taken.pk
    engine.submit_answer(erin, batch, engine.next_item(erin, batch, now=t0 + timedelta(seconds=31)), "positive",
                         now=t0 + timedelta(seconds=32))
    assert engine.next_item(erin, batch, now=t0 + timedelta(seconds=61)).pk == taken.pk


def test_deactivating_an_annotator_returns_their_items_and_refuses_their_calls(alice, erin):
    batch = make_batch(make_task(n=1), [alice, erin], overlap=1)
    item = engine.next_item(alice, batch)
    assert engine.set_active(alice, False) == 1
    assert engine.next_item(erin, batch).pk == item.pk
    with pytest.raises(AssignmentRefused) as refused:
        engine.submit_answer(alice, batch, item, "positive")
    assert refused.value.code == "inactive"
    with pytest.raises(AssignmentRefused):
        engine.next_item(alice, batch)


def test_deactivation_saved_anywhere_releases_holds(alice):
    batch = make_batch(make_task(n=1), [alice])
    engine.next_item(alice, batch)
    alice.active = False
    alice.save()  # as the Django admin does
    assert not Hold.objects.filter(annotator=alice).exists()


def test_submit_stores_one_answer_removes_the_hold_and_a_replay_stores_nothing_more(alice):
    batch = make_batch(make_task(n=2), [alice])
    item = engine.next_item(alice, batch)
    first = engine.submit_answer(alice, batch, item, "positive", source="api")
    replay = engine.submit_answer(alice, batch, item, "positive", source="api")
    assert (first.created, first.revised, replay.created, replay.revised) == (True, False, False, False)
    assert replay.annotation.pk == first.annotation.pk
    assert list(Annotation.objects.values_list("item_id", "value", "source")) == [(item.pk, "positive", "api")]
    assert not Hold.objects.exists()
    assert BatchItem.objects.get(batch=batch, item=item).human_answers == 1


def test_a_submit_for_an_item_never_held_is_refused(alice):
    batch = make_batch(make_task(n=2), [alice])
    engine.next_item(alice, batch)
    other = BatchItem.objects.get(batch=batch, position=2).item
    with pytest.raises(AssignmentRefused) as refused:
        engine.submit_answer(alice, batch, other, "positive")
    assert refused.value.code == "not_held"
    assert "not handed to you" in str(refused.value)
    assert not Annotation.objects.exists()


def test_a_submit_for_an_item_outside_the_batch_or_by_a_non_assignee_is_refused(alice, erin):
    batch = make_batch(make_task(n=1), [alice])
    stranger = make_task(name="Other", n=1).items.get()
    with pytest.raises(AssignmentRefused) as outside:
        engine.submit_answer(alice, batch, stranger, "positive")
    with pytest.raises(AssignmentRefused) as not_assignee:
        engine.next_item(erin, batch)
    assert (outside.value.code, not_assignee.value.code) == ("not_in_batch", "not_assignee")


def test_a_closed_batch_refuses_next_submits_and_revisions(alice):
    batch = make_batch(make_task(n=2), [alice])
    answered = engine.next_item(alice, batch)
    engine.submit_answer(alice, batch, answered, "positive")
    held = engine.next_item(alice, batch)
    batch.is_open = False
    batch.save(update_fields=["is_open"])
    for call in (lambda: engine.next_item(alice, batch),
                 lambda: engine.submit_answer(alice, batch, held, "positive"),
                 lambda: engine.submit_answer(alice, batch, answered, "negative")):
        with pytest.raises(AssignmentRefused) as refused:
            call()
        assert refused.value.code == "batch_closed"
        assert "closed" in str(refused.value)
    assert list(Annotation.objects.values_list("value", flat=True)) == ["positive"]


def test_a_late_submit_beyond_k_is_refused_and_stores_nothing(alice, erin):
    batch = make_batch(make_task(n=1), [alice, erin], overlap=1, hold_seconds=60)
    t0 = timezone.now()
    item = engine.next_item(alice, batch, now=t0)
    later = t0 + timedelta(seconds=61)
    engine.submit_answer(erin, batch, engine.next_item(erin, batch, now=later), "negative", now=later)
    with pytest.raises(AssignmentRefused) as refused:
        engine.submit_answer(alice, batch, item, "positive", now=later)
    assert refused.value.code == "overlap_full"
    assert list(Annotation.objects.values_list("annotator__user__username", flat=True)) == ["erin"]


def test_a_late_submit_with_a_free_slot_is_kept(alice):
    batch = make_batch(make_task(n=1), [alice], overlap=1, hold_seconds=60)
    t0 = timezone.now()
    item = engine.next_item(alice, batch, now=t0)
    result = engine.submit_answer(alice, batch, item, "positive", now=t0 + timedelta(seconds=600))
    assert result.created and result.annotation.value == "positive"


def test_a_different_second_submit_is_a_revision_that_keeps_the_previous_value(alice):
    batch = make_batch(make_task(n=1), [alice])
    item = engine.next_item(alice, batch)
    first = engine.submit_answer(alice, batch, item, "positive").annotation
    revised = engine.submit_answer(alice, batch, item, "negative")
    assert (revised.created, revised.revised) == (False, True)
    assert Annotation.objects.get().value == "negative"
    revision = AnnotationRevision.objects.get()
    assert (revision.annotation_id, revision.value, revision.skipped) == (first.pk, "positive", False)
    assert revision.previous_submitted_at == first.submitted_at
    assert BatchItem.objects.get(batch=batch).human_answers == 1


def test_an_invalid_answer_raises_the_kind_problem_and_keeps_the_hold(alice):
    batch = make_batch(make_task(n=1), [alice])
    item = engine.next_item(alice, batch)
    with pytest.raises(ValidationProblem) as problem:
        engine.submit_answer(alice, batch, item, "maybe")
    assert problem.value.field == "value"
    assert not Annotation.objects.exists()
    assert Hold.objects.filter(annotator=alice).exists()


def test_a_skip_frees_the_slot_for_another_annotator(alice, erin):
    batch = make_batch(make_task(n=1), [alice, erin], overlap=1)
    item = engine.next_item(alice, batch)
    result = engine.skip_item(alice, batch, item, reason="I do not understand the text")
    assert (result.annotation.skipped, result.annotation.value, result.annotation.skip_reason) == (
        True, None, "I do not understand the text")
    assert engine.next_item(erin, batch).pk == item.pk
    assert engine.next_item(alice, batch) is None


def test_turning_a_skip_into_an_answer_needs_a_free_slot(alice, erin):
    batch = make_batch(make_task(n=1), [alice, erin], overlap=1)
    item = engine.next_item(alice, batch)
    engine.skip_item(alice, batch, item, reason="unsure")
    engine.submit_answer(erin, batch, engine.next_item(erin, batch), "positive")
    with pytest.raises(AssignmentRefused) as refused:
        engine.submit_answer(alice, batch, item, "negative")
    assert refused.value.code == "overlap_full"
    assert Annotation.objects.get(annotator=alice).skipped is True


def test_flagging_an_answer_marks_it_and_flagging_a_new_item_records_a_flagged_skip(alice):
    batch = make_batch(make_task(n=2), [alice])
    answered = engine.next_item(alice, batch)
    engine.submit_answer(alice, batch, answered, "positive")
    flagged = engine.flag_item(alice, batch, answered, comment="gold looks wrong")
    assert (flagged.annotation.flagged, flagged.annotation.flag_comment, flagged.annotation.value) == (
        True, "gold looks wrong", "positive")
    fresh = engine.next_item(alice, batch)
    skip = engine.flag_item(alice, batch, fresh, comment="text is empty")
    assert (skip.created, skip.annotation.skipped, skip.annotation.flagged) == (True, True, True)
    assert engine.next_item(alice, batch) is None


def test_llm_annotators_never_consume_overlap(alice):
    llm = make_annotator("gpt", {"eng-Latn": "fluent"}, agent="llm")
    batch = make_batch(make_task(n=2), [alice, llm], overlap=1)
    for _ in range(2):
        engine.submit_answer(llm, batch, engine.next_item(llm, batch), "positive", source="llm")
    assert engine.next_item(llm, batch) is None
    assert not Hold.objects.filter(annotator=llm).exists()
    assert engine.annotator_progress(llm, batch) == {"done": 2, "skipped": 0, "total": 2, "held": 0,
                                                      "available": 0}
    assert engine.next_item(alice, batch).pk == item_ids(batch)[0]


def test_previous_annotation_walks_back_in_submission_order(alice):
    batch = make_batch(make_task(n=3), [alice])
    answered = []
    for value in ("positive", "negative"):
        item = engine.next_item(alice, batch)
        answered.append(engine.submit_answer(alice, batch, item, value).annotation)
    current = engine.next_item(alice, batch)
    assert engine.previous_annotation(alice, batch, before=current).pk == answered[1].pk
    assert engine.previous_annotation(alice, batch, before=answered[1].item).pk == answered[0].pk
    assert engine.previous_annotation(alice, batch, before=answered[0].item) is None
    assert engine.previous_annotation(alice, batch).pk == answered[1].pk


def test_annotator_progress_counts_done_skipped_and_what_is_left(alice, erin):
    batch = make_batch(make_task(n=4), [alice, erin], overlap=1)
    engine.submit_answer(alice, batch, engine.next_item(alice, batch), "positive")
    engine.skip_item(alice, batch, engine.next_item(alice, batch), reason="unsure")
    assert engine.next_item(erin, batch).pk == item_ids(batch)[1]  # the slot alice's skip freed
    assert engine.next_item(alice, batch).pk == item_ids(batch)[2]
    progress = engine.annotator_progress(alice, batch)
    assert progress == {"done": 1, "skipped": 1, "total": 4, "held": 1, "available": 2}


def test_annotator_progress_counts_only_the_holds_of_its_own_batch(alice, erin):
    here = make_batch(make_task(n=3), [alice, erin], overlap=1)
    elsewhere = make_batch(make_task("SentimentOther", n=3), [alice, erin], overlap=1)
    engine.next_item(erin, elsewhere)
    engine.next_item(alice, elsewhere)
    assert engine.annotator_progress(alice, here) == {"done": 0, "skipped": 0, "total": 3, "held": 0,
                                                      "available": 3}
    engine.next_item(erin, here)
    assert engine.annotator_progress(alice, here)["available"] == 2
    assert engine.annotator_progress(erin, here)["held"] == 1
    assert engine.annotator_progress(erin, elsewhere) == {"done": 0, "skipped": 0, "total": 2, "held": 1,
                                                          "available": 2}


def test_annotator_progress_counts_answers_given_in_another_batch_of_the_task_or_in_none(alice, erin):
    task = make_task(n=4)
    first = make_batch(task, [alice], overlap=1, name="first")
    second = make_batch(task, [alice, erin], overlap=2, name="second")
    engine.submit_answer(alice, first, engine.next_item(alice, first), "positive")
    Annotation.objects.create(item_id=item_ids(second)[1], annotator=alice, batch=None, value="negative",
                              source="import")  # an imported answer outside any batch
    elsewhere = make_batch(make_task("SentimentOther", n=2), [alice], overlap=1)
    engine.submit_answer(alice, elsewhere, engine.next_item(alice, elsewhere), "positive")  # another task
    figures = engine.annotator_progress(alice, second)
    assert figures == {"done": 0, "skipped": 0, "total": 2, "held": 0, "available": 2}
    assert figures["available"] == brute_force_available(alice, second, timezone.now())
    assert engine.next_item(alice, second).pk == item_ids(second)[2]


def test_time_spent_is_measured_from_the_hold_and_bounds_the_clients_figure(alice):
    batch = make_batch(make_task(n=3), [alice])
    t0 = timezone.now()
    measured = []
    for client_ms in (None, 10_000, 10**9):
        item = engine.next_item(alice, batch, now=t0)
        result = engine.submit_answer(alice, batch, item, "positive", time_spent_ms=client_ms,
                                      now=t0 + timedelta(seconds=30))
        measured.append(result.annotation.time_spent_ms)
    assert measured == [30_000, 10_000, 30_000]


def test_a_stale_answer_cache_never_lets_next_item_overshoot_and_is_repaired(alice, erin):
    batch = make_batch(make_task(n=2), [alice, erin], overlap=1)
    engine.submit_answer(erin, batch, engine.next_item(erin, batch), "positive")
    BatchItem.objects.filter(batch=batch).update(human_answers=0)  # as if an answer arrived behind the engine
    assert engine.next_item(alice, batch).pk == item_ids(batch)[1]
    assert list(BatchItem.objects.filter(batch=batch).order_by("position").values_list("human_answers", flat=True)) \
        == [1, 0]


def brute_force_available(annotator, batch, now) -> int:
    """The definition, item by item: held by them, or unanswered by them with human answers + others' live
    holds below k."""
    available = 0
    for batch_item in BatchItem.objects.filter(batch=batch):
        if Annotation.objects.filter(item=batch_item.item, annotator=annotator).exists():
            continue
        holds = Hold.objects.filter(batch_item=batch_item, expires_at__gt=now)
        answers = Annotation.objects.filter(item=batch_item.item, batch=batch, skipped=False,
                                            annotator__agent="human").count()
        held = holds.filter(annotator=annotator).exists()
        available += held or answers + holds.exclude(annotator=annotator).count() < batch.overlap
    return available


def test_annotator_progress_matches_the_item_by_item_definition_through_a_random_session(alice, erin, frank):
    import random

    rng = random.Random(7)
    people = [alice, erin, frank]
    batch = make_batch(make_task(n=7), people, overlap=2, hold_seconds=60)
    now = timezone.now()
    for _ in range(40):
        now += timedelta(seconds=rng.choice([1, 5, 30, 70]))
        who = rng.choice(people)
        item = engine.next_item(who, batch, now=now)
        if item is not None and rng.random() < 0.7:
            if rng.random() < 0.2:
                engine.skip_item(who, batch, item, reason="unsure", now=now)
            else:
                engine.submit_answer(who, batch, item, "positive", now=now)
        for person in people:
            figures = engine.annotator_progress(person, batch, now=now)
            assert figures["available"] == brute_force_available(person, batch, now), (person, figures)


def test_answers_written_behind_the_engine_are_recounted_into_the_cache(alice, erin):
    batch = make_batch(make_task(n=2), [alice, erin], overlap=1)
    first = BatchItem.objects.get(batch=batch, position=1).item
    Annotation.objects.bulk_create([Annotation(item=first, annotator=erin, batch=batch, value="positive",
                                               source="import")])  # as the annotation import does
    assert engine.recount_answers(batch) == 1
    assert engine.recount_answers(batch) == 0
    assert BatchItem.objects.get(batch=batch, item=first).human_answers == 1
    assert engine.annotator_progress(alice, batch)["available"] == 1
