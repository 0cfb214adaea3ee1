"""The plan of agreement/escalation/plan.py: human labels (majority, ties counted), agreement for label and rating
kinds, the calibration split, and which items are never escalated (docs/escalation.md)."""
from __future__ import annotations

import pytest

from agreement.escalation.plan import EscalationProblem, agrees, escalate, human_labels, majority_label


def test_the_human_label_is_the_majority_and_a_tie_has_none() -> None:
    assert majority_label(["a", "b", "a"]) == (True, "a")
    assert majority_label(["a", "b"]) == (False, None)
    assert majority_label([{"c1": 1, "c2": 0}, {"c2": 0, "c1": 1}, {"c1": 0, "c2": 0}]) == (True, {"c1": 1, "c2": 0})
    labels, n_tied = human_labels("pairwise", {1: ["a", "a", "b"], 2: ["a", "b"], 3: []})
    assert (labels, n_tied) == ({1: "a"}, 1)


def test_ratings_agree_within_the_tolerance_of_the_peoples_mean() -> None:
    labels, _ = human_labels("sts", {1: [3.0, 4.0], 2: [{"d1": 8, "d2": 2}, {"d1": 6, "d2": 0}]})
    assert labels == {1: 3.5, 2: {"d1": 7.0, "d2": 1.0}}
    assert agrees(4.5, 3.5, 1.0) and not agrees(4.6, 3.5, 1.0)
    assert agrees({"d1": 6, "d2": 2}, labels[2], 1.0) and not agrees({"d1": 9, "d2": 1}, labels[2], 1.0)
    assert agrees("a", "a", None) and not agrees("a", "tie", None)


def test_human_labelled_items_are_never_escalated_and_unanswered_ones_always_are() -> None:
    items = list(range(50))
    humans = {i: ["x"] for i in range(40)}
    answers = {"j": {i: ("x", 0.9) for i in range(45)}}  # items 45-49: the judge never answered
    plan = escalate("classification", items, humans, ["j"], answers, 0.2, 0.1)
    assert plan.escalated == [45, 46, 47, 48, 49]
    assert plan.result["rest"] == {"n_items": 10, "n_decided": 5, "coverage": 0.5, "n_escalated": 5}


def test_a_rating_kind_needs_a_tolerance_and_clustering_is_not_supported() -> None:
    with pytest.raises(EscalationProblem, match="a sts task needs --tolerance"):
        escalate("sts", [1], {1: [1.0]}, ["j"], {}, 0.1, 0.1)
    with pytest.raises(EscalationProblem, match="not clustering"):
        escalate("clustering", [1], {}, ["j"], {}, 0.1, 0.1)


def test_sts_judges_calibrate_with_a_tolerance() -> None:
    items = list(range(60))
    humans = {i: [2.0, 3.0] for i in items}  # mean 2.5
    answers = {"j": {i: (3.0 if i < 50 else 5.0, 0.9 if i < 50 else 0.4) for i in items}}
    plan = escalate("sts", items, humans, ["j"], answers, 0.15, 0.1, tolerance=1.0)
    judge = plan.result["judges"][0]
    assert (judge["n_covered"], judge["risk"]) == (50, 0.0)  # |3.0 − 2.5| ≤ 1; the 5.0s (off by 2.5) left out
