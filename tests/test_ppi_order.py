"""The order PPI's confidence sequence reads labels in (agreement/ppi/ppi_loading.py `label_order`): the order
people gave them for answers given in the app, and for imported answers an order no file can change: the line's
own `submitted_at`, else the import's one time with ties broken by a digest of the item's id (docs/ppi.md,
"Stopping"). Issue 33: 300 STS labels imported sorted by rating made the sequence miss the pool mean at 28 of
29 looks, because each bulk-inserted row had its own microsecond in line order."""
from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import numpy as np
import pytest

from agreement.ppi.ppi_loading import load_numbers
from annotation.models import Annotation, AnnotationRevision
from measures.ppi.sequence import confidence_sequence
from measures.ppi.task_estimates import estimates_document
from tests.ppi_helpers import JUDGE
from tests.report_builders import build_task, import_answers, import_study

pytestmark = pytest.mark.django_db


def sts_study(size: int, labelled: int, seed: int) -> tuple[list[dict], list[dict], list[dict], float]:
    """(records, the judge's answers, the people's answers, the people's mean over every item): similarities
    on 0–5, a judge 0.5 too high with noise, alice on a uniform sample of `labelled` items."""
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(2.6, 1.3, size) * 2) / 2, 0, 5)
    judge = np.clip(np.round((truth + 0.5 + rng.normal(0, 0.7, size)) * 2) / 2, 0, 5)
    records = [{"sentence1": f"left {i}", "sentence2": f"right {i}", "score": float(truth[i])} for i in range(size)]
    judged = [{"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm", "value": float(judge[i])}
              for i in range(size)]
    people = [{"item": str(i + 1), "annotator": "alice", "value": float(truth[i])}
              for i in rng.choice(size, labelled, replace=False)]
    return records, judged, people, float(truth.mean())


def looks_and_order(task_name: str) -> tuple[list[dict], list[str]]:
    from tasks_app.models import Task
    numbers = load_numbers(Task.objects.get(name=task_name), JUDGE)
    (sequence,) = estimates_document(numbers)["sequences"]
    assert numbers.label_order is not None
    return sequence["looks"], [numbers.items[row] for row in numbers.label_order]


def test_the_same_answers_imported_sorted_and_shuffled_give_identical_looks(tmp_path: Path) -> None:
    records, judged, people, pool_mean = sts_study(300, 150, seed=11)
    by_rating = sorted(people, key=lambda a: a["value"])
    shuffled = [people[k] for k in np.random.default_rng(1).permutation(len(people))]
    import_study(tmp_path, "sts", "order-sorted", records, judged + by_rating)
    import_study(tmp_path, "sts", "order-shuffled", records, shuffled + judged)

    sorted_looks, sorted_order = looks_and_order("order-sorted")
    shuffled_looks, shuffled_order = looks_and_order("order-shuffled")
    assert sorted_looks == shuffled_looks and sorted_order == shuffled_order
    # the order is the digest of the item ids, not the file's (which was sorted by rating)
    assert sorted_order == sorted(sorted_order, key=lambda item: hashlib.sha256(item.encode()).hexdigest())
    assert len(sorted_looks) == 14  # looks at 20, 30, …, 150
    assert all(look["low"] <= pool_mean <= look["high"] for look in sorted_looks)
    # read in the file's line order instead, the same sequence misses the pool mean at every look
    judge_of = {a["item"]: a["value"] for a in judged}
    in_file_order = confidence_sequence(np.array([a["value"] for a in by_rating]),
                                        np.array([judge_of[a["item"]] for a in by_rating]),
                                        np.array([a["value"] for a in judged]), (0.0, 5.0))
    looked = in_file_order.t % 10 == 0
    missed = (in_file_order.low > pool_mean) | (in_file_order.high < pool_mean)
    assert int(np.sum(missed & looked)) == 14  # every one of the 14
    stamps = Annotation.objects.filter(item__task__name="order-sorted").values("submitted_at").distinct()
    assert stamps.count() == 1  # one import, one time


def test_times_given_in_the_file_order_the_labels_whatever_the_line_order(tmp_path: Path) -> None:
    records, judged, people, _ = sts_study(60, 30, seed=12)
    start = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    dated = [{**a, "submitted_at": (start + dt.timedelta(minutes=k)).isoformat()} for k, a in enumerate(people)]
    import_study(tmp_path, "sts", "order-dated", records, judged + dated[::-1])  # lines last-given first
    _looks, order = looks_and_order("order-dated")
    assert order == [a["item"] for a in people]


def test_answers_given_in_the_app_count_in_submission_order_and_a_revision_moves_nothing() -> None:
    records, judged, people, _ = sts_study(40, 25, seed=13)
    task = build_task("sts", "order-app", records)
    import_answers(task, judged + people)
    start = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    given = list(reversed([a["item"] for a in people]))  # people gave them in the reverse of the rows above
    for minute, item in enumerate(given):
        Annotation.objects.filter(item__task=task, item__external_id=item, annotator__user__username="alice").update(
            submitted_at=start + dt.timedelta(minutes=minute))
    assert looks_and_order("order-app")[1] == given
    # alice revises her first answer an hour later (the app stamps the revision's time on the answer): the item
    # keeps its place, the time it was first labelled
    first = Annotation.objects.get(item__task=task, item__external_id=given[0], annotator__user__username="alice")
    AnnotationRevision.objects.create(annotation=first, value=first.value, skipped=False,
                                      previous_submitted_at=first.submitted_at)
    Annotation.objects.filter(pk=first.pk).update(value=5.0, submitted_at=start + dt.timedelta(hours=1))
    assert looks_and_order("order-app")[1] == given
