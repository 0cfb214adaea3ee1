"""The label planner (measures/ppi/planner.py): the n it plans, labelled and re-estimated, reaches the target
half-width; and `ppi_batch`, which makes a human batch of exactly those items, drawn uniformly."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotation, Batch, BatchAssignee
from measures.ppi.estimates import Sample, estimate
from measures.ppi.planner import labels_needed
from tests.ppi_helpers import JUDGE, rated_likert_study
from tests.report_builders import import_answers


def population(seed: int, size: int = 4000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human ratings 1–7, a judge 0.8 too high with noise, and a random labelling order."""
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(4, 1.4, size)), 1, 7)
    judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, size)), 1, 7)
    return truth, judge, rng.permutation(size)


def labelled_first(truth: np.ndarray, judge: np.ndarray, order: np.ndarray, n: int) -> Sample:
    return Sample(truth[order[:n]], judge[order[:n]], judge[order[n:]])


def planned_and_reached(seed: int, n0: int = 80, shrink: float = 0.6, assurance: float = 1.645) -> tuple[int, bool]:
    truth, judge, order = population(seed)
    now = labelled_first(truth, judge, order, n0)
    target = shrink * estimate(now).half_width
    plan = labels_needed(now, target, assurance=assurance)
    assert plan.n_more is not None
    after = estimate(labelled_first(truth, judge, order, n0 + plan.n_more))  # the next n_more of a uniform order
    return plan.n_more, after.half_width <= target


def test_the_planned_labels_reach_the_target_half_width() -> None:
    n_more, reached = planned_and_reached(seed=11)
    assert n_more > 0 and reached


def test_with_its_margin_the_plan_reaches_the_target_in_most_draws_and_without_it_about_half() -> None:
    with_margin = [planned_and_reached(seed)[1] for seed in range(100)]
    without = [planned_and_reached(seed, assurance=0.0)[1] for seed in range(100)]
    assert np.mean(with_margin) >= 0.88  # nominal one-sided 95%
    assert 0.3 <= np.mean(without) <= 0.75


def test_no_more_labels_reproduces_todays_half_width() -> None:
    truth, judge, order = population(3)
    now = labelled_first(truth, judge, order, 120)
    plan = labels_needed(now, 10.0)
    assert plan.n_more == 0
    assert plan.half_width_planned == pytest.approx(estimate(now).half_width, rel=1e-12)
    assert plan.half_width_now == pytest.approx(estimate(now).half_width, rel=1e-12)


def test_an_unreachable_target_says_what_labelling_everything_would_give() -> None:
    truth, judge, order = population(4, size=300)
    plan = labels_needed(labelled_first(truth, judge, order, 50), 0.01)
    assert plan.n_more is None and "not reachable: with all 300 items labelled the half-width would be ±" in plan.reason
    with pytest.raises(ValueError, match="positive"):
        labels_needed(labelled_first(truth, judge, order, 50), -1)


@pytest.mark.django_db
def test_ppi_batch_creates_a_batch_of_exactly_the_planned_items_drawn_from_the_unlabelled(alice) -> None:
    task, truth = rated_likert_study("ppi-plan", 200, list(range(0, 200, 5)), seed=8)  # 40 labelled
    out = io.StringIO()
    call_command("ppi_batch", "ppi-plan", "--judge", JUDGE, "--target-half-width", "0.3", "--seed", "5",
                 "--annotators", "alice", stdout=out)
    summary = json.loads(out.getvalue())
    plan_out = io.StringIO()
    call_command("ppi", "ppi-plan", "--judge", JUDGE, "--target-half-width", "0.3", stdout=plan_out,
                 stderr=io.StringIO())
    planned = json.loads(plan_out.getvalue())["plan"]
    assert summary["n_items"] == planned["n_more"] == summary["plan"]["n_more"] > 0
    batch = Batch.objects.get(pk=summary["batch_id"])
    assert (batch.language, batch.overlap) == (task.language, 1)
    items = list(batch.batch_items.order_by("position").values_list("item__external_id", flat=True))
    assert items == summary["items"] and len(set(items)) == len(items)
    labelled = {str(i + 1) for i in range(0, 200, 5)}
    assert not set(items) & labelled  # drawn from the items no person answered
    assert BatchAssignee.objects.filter(batch=batch, annotator=alice).exists()
    # the same seed draws the same items; another seed others
    again = io.StringIO()
    call_command("ppi_batch", "ppi-plan", "--judge", JUDGE, "--items", str(len(items)), "--seed", "5",
                 "--name", "again", stdout=again)
    assert json.loads(again.getvalue())["items"] == items
    # label the batch (alice rates as the people do) and re-estimate: the half-width is within the target
    import_answers(task, [{"item": e, "annotator": "alice", "value": {"overall": int(truth[int(e) - 1])}}
                          for e in items])
    after = io.StringIO()
    call_command("ppi", "ppi-plan", "--judge", JUDGE, stdout=after, stderr=io.StringIO())
    row = json.loads(after.getvalue())["estimates"][0]
    assert row["n"] == 40 + len(items) and row["half_width"] <= 0.3


@pytest.mark.django_db
def test_ppi_batch_refuses_bad_input_and_writes_nothing() -> None:
    rated_likert_study("ppi-plan-bad", 30, [0, 1, 2, 3])
    before = (Batch.objects.count(), Annotation.objects.count())
    for args, message in [(["--judge", "alice", "--items", "3"], "is a person"),
                          (["--judge", JUDGE, "--items", "100"], "only 26 items have no human answer"),
                          (["--judge", JUDGE, "--target-half-width", "0.0001"], "not reachable"),
                          (["--judge", JUDGE, "--items", "3", "--annotators", "zed"], "no annotator named zed"),
                          (["--judge", JUDGE, "--target-half-width", "0.5", "--alpha", "2"], "alpha must be between"),
                          (["--judge", JUDGE, "--items", "0"], "at least one item")]:
        with pytest.raises(CommandError, match=message):
            call_command("ppi_batch", "ppi-plan-bad", *args, stdout=io.StringIO())
    call_command("ppi_batch", "ppi-plan-bad", "--judge", JUDGE, "--items", "3", "--name", "b", stdout=io.StringIO())
    with pytest.raises(CommandError, match="already has a batch named 'b'"):
        call_command("ppi_batch", "ppi-plan-bad", "--judge", JUDGE, "--items", "3", "--name", "b",
                     stdout=io.StringIO())
    assert (Batch.objects.count(), Annotation.objects.count()) == (before[0] + 1, before[1])
