"""Calibrated escalation (measures/escalation/calibration.py) against a direct computation with
scipy.stats.binom, and its guarantee over 1,000 seeded calibration/test splits ("Trust or Escalate",
arXiv 2407.18370, §2–3; issue 25, "Done when")."""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from measures.escalation.calibration import (
    MIN_COVERED,
    START_COVERED,
    THRESHOLDS,
    apply_cascade,
    calibrate_cascade,
    calibrate_judge,
    clopper_pearson_upper,
)


@cache
def binom_root(k: int, n: int, delta: float) -> float:
    """The r with binom.cdf(k, n, r) = δ, found by root search (1 when k = n: the cdf is 1 for every r < 1)."""
    if k >= n:
        return 1.0
    return brentq(lambda r: binom.cdf(k, n, r) - delta, 1e-12, 1 - 1e-12, xtol=1e-14)


def direct_threshold(confidence: np.ndarray, correct: np.ndarray, alpha: float, delta: float,
                     start: int = START_COVERED) -> tuple:
    """The documented steps one λ at a time (docs/escalation.md, §2): from the highest λ covering at least
    `start` items (at most a quarter of them, never fewer than 30) down, stopping at the first bound over α:
    (threshold, n covered, risk, bound) or (None, 0, None, None)."""
    start = max(MIN_COVERED, min(start, confidence.size // 4))
    last = (None, 0, None, None)
    for lam in THRESHOLDS[::-1]:
        covered = confidence >= lam
        n = int(covered.sum())
        if n < start:
            continue
        k = int((~correct[covered]).sum())
        bound = binom_root(k, n, delta)
        if bound > alpha:
            break
        last = (float(lam), n, k / n, bound)
    return last


@pytest.mark.parametrize(("k", "n", "delta"), [(0, 30, 0.1), (3, 30, 0.1), (12, 80, 0.05), (29, 30, 0.2),
                                               (40, 400, 0.01), (30, 30, 0.1)])
def test_the_clopper_pearson_bound_solves_the_binomial_cdf_equation(k: int, n: int, delta: float) -> None:
    bound = float(clopper_pearson_upper(k, n, delta))
    assert bound == pytest.approx(binom_root(k, n, delta), abs=1e-9)
    if k < n:
        assert binom.cdf(k, n, bound) == pytest.approx(delta, abs=1e-9)


def test_zero_errors_in_thirty_bound_the_risk_by_one_minus_delta_to_the_one_thirtieth() -> None:
    # binom.cdf(0, 30, r) = (1 − r)^30 = δ  ⇒  r = 1 − δ^(1/30); δ = 0.1 gives 0.07388...
    assert float(clopper_pearson_upper(0, 30, 0.1)) == pytest.approx(1 - 0.1 ** (1 / 30), abs=1e-12)
    assert 1 - 0.1 ** (1 / 30) == pytest.approx(0.0738808, abs=1e-6)


def hand_built_set(size: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """`size` items, confidence 1/size … 1; the judge is wrong on every 10th item of the top half and on every 2nd
    item below (100 items: 5 and 25 errors)."""
    confidence = np.arange(1, size + 1) / size
    correct = np.ones(size, dtype=bool)
    rank = np.arange(size)[::-1]  # 0 for the most confident item
    correct[(rank < size // 2) & (rank % 10 == 9)] = False
    correct[(rank >= size // 2) & (rank % 2 == 1)] = False
    return confidence, correct


@pytest.mark.parametrize(("size", "start"), [(100, MIN_COVERED), (400, MIN_COVERED), (400, 50), (400, START_COVERED),
                                             (250, START_COVERED)])
@pytest.mark.parametrize(("alpha", "delta"), [(0.15, 0.1), (0.2, 0.1), (0.3, 0.05), (0.1, 0.1), (0.25, 0.2)])
def test_a_hand_built_set_gets_the_threshold_coverage_and_bound_of_the_direct_computation(
        alpha: float, delta: float, size: int, start: int) -> None:
    confidence, correct = hand_built_set(size)
    fitted = calibrate_judge("judge", confidence, correct, alpha, delta, start_covered=start)
    threshold, n_covered, risk, bound = direct_threshold(confidence, correct, alpha, delta, start)
    assert (fitted.threshold, fitted.n_covered) == (threshold, n_covered)
    if threshold is None:
        assert fitted.risk is None and fitted.risk_bound is None
    else:
        assert fitted.risk == pytest.approx(risk) and fitted.risk_bound == pytest.approx(bound, abs=1e-9)


def test_a_worked_example_stops_before_the_first_bound_over_alpha() -> None:
    # 200 items, confidence 0.005 … 1.0; the top 100 have 4 errors (ranks 40, 60, 80, 99), the rest one in two.
    # α = 0.15, δ = 0.1. Going down one item at a time: n = 117 with k = 12 errors has bound 0.1482 ≤ 0.15, the
    # next item is an error, n = 118 with k = 13 has bound 0.1566 > 0.15: stop. The threshold is the smallest λ
    # of the grid above the 118th confidence (0.415), i.e. 2075/4999 = 0.41508.
    confidence = np.arange(1, 201) / 200
    rank = np.arange(200)[::-1]
    correct = ~np.isin(rank, [40, 60, 80, 99]) & ~((rank >= 100) & (rank % 2 == 1))
    assert binom_root(12, 117, 0.1) == pytest.approx(0.14820, abs=1e-5)
    assert binom_root(13, 118, 0.1) == pytest.approx(0.15657, abs=1e-5)
    # From the top (30 covered, the paper's start) and from the pre-specified start (100, capped at a quarter of the
    # 200 items: 50 covered, 1 error, bound 0.0756 ≤ 0.15, then down as before) the test stops at the same place.
    assert binom_root(1, 50, 0.1) == pytest.approx(0.07558, abs=1e-5)
    for start in (MIN_COVERED, 50):
        fitted = calibrate_judge("judge", confidence, correct, 0.15, 0.1, start_covered=start)
        assert (fitted.n_covered, fitted.risk) == (117, pytest.approx(12 / 117))
        assert fitted.risk_bound == pytest.approx(binom_root(12, 117, 0.1), abs=1e-9)
        assert fitted.threshold == pytest.approx(2075 / 4999)
        assert fitted.threshold == direct_threshold(confidence, correct, 0.15, 0.1, start)[0]
        assert fitted.start_covered == start and fitted.shortfall is None
    assert calibrate_judge("judge", confidence, correct, 0.15, 0.1).start_covered == 50  # the default, capped


def test_fixed_sequence_testing_stops_at_the_first_failure_even_if_a_lower_threshold_would_pass() -> None:
    # 40 confident items all wrong, then 400 right: every λ covering the wrong ones fails first, so nothing
    # passes, although covering everything (40 errors in 440) would have a bound under 0.15.
    confidence = np.concatenate([np.full(40, 0.99), np.full(400, 0.5)])
    correct = np.concatenate([np.zeros(40, bool), np.ones(400, bool)])
    assert float(clopper_pearson_upper(40, 440, 0.1)) < 0.15
    fitted = calibrate_judge("judge", confidence, correct, 0.15, 0.1, start_covered=MIN_COVERED)
    assert fitted.threshold is None and fitted.n_covered == 0 and fitted.n_tested == 1
    # Started at 100 covered items, the first λ tested covers all 440 (40 errors, 9.1%, under α): it passes, and so
    # does every λ below it (the same 440 items), down to λ = 0.
    started = calibrate_judge("judge", confidence, correct, 0.15, 0.1)
    assert (started.threshold, started.n_covered, started.n_tested) == (0.0, 440, 2500)


def test_fewer_than_thirty_covered_items_never_count_as_a_test() -> None:
    confidence = np.linspace(0.1, 1.0, 29)
    fitted = calibrate_judge("judge", confidence, np.ones(29, bool), 0.15, 0.1)
    assert fitted.threshold is None and fitted.n_tested == 0


def test_a_missing_confidence_is_never_covered() -> None:
    confidence = np.concatenate([np.full(10, np.nan), np.full(60, 0.9)])
    correct = np.concatenate([np.zeros(10, bool), np.ones(60, bool)])
    fitted = calibrate_judge("judge", confidence, correct, 0.15, 0.1)
    assert fitted.n_covered == 60 and fitted.risk == 0.0 and fitted.n_calibration == 70


@pytest.mark.parametrize(("alpha", "delta"), [(0.0, 0.1), (1.0, 0.1), (0.1, 0.0), (0.1, 1.5), (-0.2, 0.1)])
def test_alpha_or_delta_outside_zero_one_is_refused_by_name(alpha: float, delta: float) -> None:
    name = "alpha" if not 0 < alpha < 1 else "delta"
    with pytest.raises(ValueError, match=f"{name} must be strictly between 0 and 1"):
        calibrate_judge("judge", np.ones(40), np.ones(40, bool), alpha, delta)


def test_the_cascade_calibrates_each_judge_on_the_items_no_earlier_judge_covered() -> None:
    rng = np.random.default_rng(7)
    n = 600
    cheap, strong = rng.uniform(size=n), rng.uniform(size=n)
    cheap_correct = rng.uniform(size=n) < 0.5 + 0.5 * cheap
    strong_correct = rng.uniform(size=n) < 0.6 + 0.4 * strong
    cascade = calibrate_cascade(["cheap", "strong"], [cheap, strong], [cheap_correct, strong_correct], 0.15, 0.1)
    first = direct_threshold(cheap, cheap_correct, 0.15, 0.1)
    assert cascade.judges[0].threshold == first[0] and first[0] is not None
    rest = cheap < first[0]
    second = direct_threshold(strong[rest], strong_correct[rest], 0.15, 0.1)
    assert second[0] is not None
    assert cascade.judges[1].threshold == second[0] and cascade.judges[1].n_calibration == int(rest.sum())
    assert (cascade.decided_by == 0).sum() == first[1] and (cascade.decided_by == 1).sum() == second[1]
    decided = apply_cascade([j.threshold for j in cascade.judges], [cheap, strong])
    assert np.array_equal(decided, cascade.decided_by)


def test_an_item_no_judge_is_confident_about_is_escalated() -> None:
    decided = apply_cascade([0.8, None, 0.5], [np.array([0.9, 0.1, 0.1, np.nan]), np.array([1.0, 1.0, 1.0, 1.0]),
                                              np.array([0.2, 0.6, 0.4, 0.7])])
    assert decided.tolist() == [0, 2, -1, 2]


# ---------------------------------------------------------------------------------------------
# The guarantee, over seeded draws of the calibration set


def population_risk(threshold: float | None) -> float:
    """Synthetic judge: confidence c ~ U(0, 1), wrong with probability (1 − c)/2, so among items with c ≥ λ the
    error rate is E[(1 − c)/2 | c ≥ λ] = (1 − λ)/4 (0 when nothing is covered)."""
    return 0.0 if threshold is None else (1 - threshold) / 4


def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    confidence = rng.uniform(size=n)
    return confidence, rng.uniform(size=n) >= (1 - confidence) / 2


def test_over_1000_seeded_splits_the_kept_items_agree_with_humans_at_least_1_minus_alpha_often_enough() -> None:
    alpha, delta, n_draws = 0.15, 0.1, 1000
    # Population risk ≤ α exactly when λ ≥ 0.4; the realised agreement is measured on a fresh test split too.
    held, realised_ok, naive_held, coverages = 0, 0, 0, []
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        confidence, correct = draw(rng, 400)
        fitted = calibrate_judge("judge", confidence, correct, alpha, delta)
        held += population_risk(fitted.threshold) <= alpha
        test_confidence, test_correct = draw(rng, 2000)
        kept = test_confidence >= (fitted.threshold if fitted.threshold is not None else np.inf)
        realised_ok += (not kept.any()) or test_correct[kept].mean() >= 1 - alpha
        coverages.append(kept.mean())
        # Without the bound (largest coverage with empirical risk ≤ α), the guarantee does not hold.
        order = np.argsort(-confidence)
        risk = np.cumsum(~correct[order]) / np.arange(1, 401)
        ok = np.flatnonzero(risk[MIN_COVERED - 1:] <= alpha)
        naive_threshold = confidence[order][ok[-1] + MIN_COVERED - 1] if ok.size else None
        naive_held += population_risk(naive_threshold) <= alpha
    assert held / n_draws >= 1 - delta
    assert realised_ok / n_draws >= 1 - delta
    assert 0.3 < np.mean(coverages) < 0.6  # the ideal threshold 0.4 covers 60%; the bound costs some coverage
    assert naive_held / n_draws < 1 - delta
    print(f"guarantee held in {held / n_draws:.3f} of draws (realised on the test split: {realised_ok / n_draws:.3f}),"
          f" mean coverage {np.mean(coverages):.3f}; without the bound: {naive_held / n_draws:.3f}")


def test_a_two_judge_cascade_keeps_its_guarantee_over_seeded_splits() -> None:
    alpha, delta, n_draws = 0.2, 0.1, 300
    ok = 0
    for seed in range(n_draws):
        rng = np.random.default_rng(10_000 + seed)
        n = 3000
        cheap, strong = rng.uniform(size=n), rng.uniform(size=n)
        cheap_correct = rng.uniform(size=n) >= (1 - cheap) / 1.5
        strong_correct = rng.uniform(size=n) >= (1 - strong) / 3
        calibration = slice(0, 500)
        cascade = calibrate_cascade(["cheap", "strong"], [cheap[calibration], strong[calibration]],
                                    [cheap_correct[calibration], strong_correct[calibration]], alpha, delta)
        decided = apply_cascade([j.threshold for j in cascade.judges], [cheap[500:], strong[500:]])
        right = np.where(decided == 0, cheap_correct[500:], strong_correct[500:])[decided >= 0]
        ok += right.size == 0 or right.mean() >= 1 - alpha
    assert ok / n_draws >= 1 - 2 * delta  # the union bound over two judges (docs/escalation.md)
