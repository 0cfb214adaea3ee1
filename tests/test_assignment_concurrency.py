"""Overlap k is exact under load: many annotators, each a thread with its own PostgreSQL connection,
hammering next/submit on one batch at the same moment (Argilla's overlap is known to overshoot here).
"""
from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from annotation.core import assignment as engine
from annotation.core.assignment import AssignmentRefused
from annotation.models import Annotation, Annotator, BatchItem, Hold

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401
from .conftest import make_annotator, require_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def crowd(n: int) -> list[Annotator]:
    return [make_annotator(f"annotator{i:02d}", {"eng-Latn": "native"}) for i in range(n)]


def run_together(workers: list[Callable[[], Any]]) -> list[BaseException]:
    """Start every worker at the same instant on its own thread (own DB connection); collect their errors."""
    barrier = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def run(work: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            work()
        except BaseException as exc:  # every error is a test failure, reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(work,)) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return errors


@pytest.mark.parametrize("k", [1, 2, 3])
def test_fifty_annotators_finish_a_batch_with_exactly_k_answers_per_item(k: int) -> None:
    require_postgres()
    annotators = crowd(50)
    batch = make_batch(make_task(n=60), annotators, overlap=k)
    stored: Counter[int] = Counter()  # annotator id -> answers the engine said it created
    lock = threading.Lock()

    def annotate(annotator: Annotator) -> None:
        while (item := engine.next_item(annotator, batch)) is not None:
            result = engine.submit_answer(annotator, batch, item, random.choice(["positive", "negative"]))
            with lock:
                stored[annotator.pk] += result.created

    errors = run_together([lambda a=a: annotate(a) for a in annotators])

    assert errors == []
    per_item = Counter(Annotation.objects.filter(batch=batch).values_list("item_id", flat=True))
    assert sorted(set(per_item.values())) == [k]
    assert len(per_item) == 60
    pairs = list(Annotation.objects.filter(batch=batch).values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs)) == 60 * k  # every answer by a different annotator, no duplicates
    assert sum(stored.values()) == 60 * k  # every submit the engine accepted is in the database
    assert set(BatchItem.objects.filter(batch=batch).values_list("human_answers", flat=True)) == {k}
    assert not Hold.objects.filter(batch_item__batch=batch).exists()


def test_holds_expiring_under_load_never_let_an_item_exceed_k() -> None:
    """Slow annotators lose their one-second holds; their late submits are kept while a slot is free and
    refused once k others answered, never stored beyond k."""
    require_postgres()
    annotators = crowd(20)
    batch = make_batch(make_task(n=30), annotators, overlap=2, hold_seconds=1)
    refusals: Counter[str] = Counter()
    lock = threading.Lock()

    def annotate(annotator: Annotator) -> None:
        rng = random.Random(annotator.pk)
        while (item := engine.next_item(annotator, batch)) is not None:
            time.sleep(rng.choice([0, 0, 0, 0.6, 1.3]))
            try:
                created = engine.submit_answer(annotator, batch, item, "positive").created
            except AssignmentRefused as refused:
                with lock:
                    refusals[refused.code] += 1
            else:
                with lock:
                    refusals["accepted"] += created

    errors = run_together([lambda a=a: annotate(a) for a in annotators])

    assert errors == []
    assert set(refusals) <= {"accepted", "overlap_full"}
    per_item = Counter(Annotation.objects.filter(batch=batch).values_list("item_id", flat=True))
    assert max(per_item.values()) <= 2
    assert sum(per_item.values()) == refusals["accepted"]


def test_a_double_clicked_submit_from_many_requests_stores_one_answer(alice) -> None:
    require_postgres()
    batch = make_batch(make_task(n=1), [alice])
    item = engine.next_item(alice, batch)
    results = []

    def click() -> None:
        results.append(engine.submit_answer(alice, batch, item, "positive"))

    errors = run_together([click] * 10)

    assert errors == []
    assert sorted(r.created for r in results) == [False] * 9 + [True]
    assert Annotation.objects.filter(annotator=alice).count() == 1
