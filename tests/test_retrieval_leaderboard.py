"""The study's aggregations: two-stage averages, rank shift with Kendall's τ, deltas, paired t-tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

from measures.retrieval.judge_leaderboard import deltas, paired_t_test, places, rank_shift, two_stage_average


def test_two_stage_average_weighs_each_judge_once_whatever_its_number_of_datasets() -> None:
    curves = {"gpt": {"ArguAna": [0.2, 0.4], "SCIDOCS": [0.4, 0.6], "TRECCOVID": [0.6, 0.8]},
              "grok": {"ArguAna": [1.0, 1.0]}}
    per_judge, average = two_stage_average(curves)
    np.testing.assert_allclose(per_judge["gpt"], [0.4, 0.6])
    np.testing.assert_allclose(average, [0.7, 0.8])  # not the pooled mean of four curves (0.55, 0.7)


def test_rank_shift_by_hand() -> None:
    """Places 1..5 against 3, 4, 1, 2, 5: of the 10 pairs 6 agree and 4 disagree, τ = (6 − 4) / 10 = 0.2."""
    binary = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5}
    graded = {"a": 0.7, "b": 0.6, "c": 0.9, "d": 0.8, "e": 0.5, "new": 0.99}
    shift = rank_shift(binary, graded)
    assert shift.tau == pytest.approx(0.2) and shift.systems == 5
    assert shift.moves["c"] == (3, 1) and shift.moves["a"] == (1, 3) and "new" not in shift.moves


def test_rank_shift_of_fewer_than_two_common_systems_is_undefined() -> None:
    assert math.isnan(rank_shift({"a": 1.0}, {"a": 2.0, "b": 1.0}).tau)


def test_places_share_ties_and_deltas_are_against_the_baseline() -> None:
    assert places({"a": 0.5, "b": 0.7, "c": 0.7, "d": 0.1}) == {"b": 1, "c": 1, "a": 3, "d": 4}
    assert deltas({"a": 0.5, "b": 0.75}, "a") == {"a": 0.0, "b": 0.25}
    with pytest.raises(KeyError):
        deltas({"a": 0.5}, "zz")


def test_paired_t_test_by_hand() -> None:
    """Differences 0.1, 0.2, 0.3 over three queries: mean 0.2, sd 0.1, t = 0.2 / (0.1 / √3) = 3.4641."""
    t, p, n = paired_t_test({1: 0.6, 2: 0.7, 3: 0.9, 4: 0.1}, {1: 0.5, 2: 0.5, 3: 0.6})
    assert n == 3 and t == pytest.approx(2 * math.sqrt(3)) and 0.05 < p < 0.1
