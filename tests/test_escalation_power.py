"""Escalation with power (issue 33, item 3): the fixed-sequence test started at 100 covered calibration items keeps
what a good but imperfect judge can, with the guarantee; a judge that covers nothing says how close it came.

The judges are those of docs/escalation.md, §3: confidence c ~ Beta(5, 1.2) and
- "good": P(correct | c) = min(1, 0.3 + 0.68c), wrong on 2–4 % of its most confident items; the lowest λ whose
  disagreement is ≤ 0.1 keeps 72.0 % of the items;
- "never errs at the top": the same below c = 0.9, always right from 0.9 up.
Their disagreement among the items with c ≥ λ is computed exactly (Beta integrals), so "the guarantee held" is
checked against the population, not a sample. bench/bench_escalation_power.py runs 1,000 draws of each."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_distribution

from measures.escalation.calibration import (
    MIN_COVERED,
    START_COVERED,
    apply_cascade,
    calibrate_cascade,
    calibrate_judge,
    clopper_pearson_upper,
    first_test_covers,
    labels_needed,
)

A, B = 5.0, 1.2
MEAN_SHIFT = A / (A + B)  # E[c · 1{c ≥ λ}] = A/(A+B) · P_{Beta(A+1, B)}(c ≥ λ)


def good_judge_risk(threshold: float | None) -> float:
    """E[0.7 − 0.68c | c ≥ λ] (min(1, 0.3 + 0.68c) < 1 on [0, 1]); 0 when the judge keeps nothing."""
    if threshold is None:
        return 0.0
    mean_c = MEAN_SHIFT * beta_distribution.sf(threshold, A + 1, B) / beta_distribution.sf(threshold, A, B)
    return 0.7 - 0.68 * mean_c


def top_judge_risk(threshold: float | None, top: float = 0.9) -> float:
    """E[(0.7 − 0.68c)·1{c < 0.9} | c ≥ λ]: no error from c = 0.9 up."""
    if threshold is None or threshold >= top:
        return 0.0
    mass = beta_distribution.cdf(top, A, B) - beta_distribution.cdf(threshold, A, B)
    mass_c = MEAN_SHIFT * (beta_distribution.cdf(top, A + 1, B) - beta_distribution.cdf(threshold, A + 1, B))
    return (0.7 * mass - 0.68 * mass_c) / beta_distribution.sf(threshold, A, B)


def coverage(threshold: float | None) -> float:
    return 0.0 if threshold is None else float(beta_distribution.sf(threshold, A, B))


def draw(rng: np.random.Generator, n: int, never_errs_at_top: bool = False) -> tuple[np.ndarray, np.ndarray]:
    confidence = rng.beta(A, B, size=n)
    p_correct = np.where(never_errs_at_top & (confidence >= 0.9), 1.0, np.minimum(1.0, 0.3 + 0.68 * confidence))
    return confidence, rng.uniform(size=n) < p_correct


def test_the_best_threshold_of_the_good_judge_keeps_72_percent_at_90_percent_agreement() -> None:
    grid = np.linspace(0, 0.999, 20_000)
    risks = np.array([good_judge_risk(lam) for lam in grid])
    best = grid[risks <= 0.1].min()
    assert coverage(best) == pytest.approx(0.720, abs=0.001)
    assert good_judge_risk(0.999) == pytest.approx(0.02, abs=0.001)  # 2 % wrong at the very top


def test_the_start_is_100_covered_items_at_most_a_quarter_of_the_answered_ones_but_never_fewer_than_30() -> None:
    assert (START_COVERED, MIN_COVERED) == (100, 30)
    assert [first_test_covers(n) for n in (29, 30, 90, 119, 200, 400, 5000)] == [0, 30, 30, 30, 50, 100, 100]
    assert first_test_covers(400, start_covered=30) == 30 and first_test_covers(400, start_covered=10) == 30


def test_labels_needed_is_the_smallest_calibration_size_whose_bound_passes_at_the_same_share_and_rate() -> None:
    # 4 errors in the 100 most confident of 400 items (share 1/4, R̂ = 0.04), α = δ = 0.1. With N' items: n' = N'/4,
    # k' = 0.04·n'; the bound is the 0.9 quantile of Beta(k' + 1, n' − k'). Scanning N' one at a time:
    def bound(size: int) -> float:
        n = size / 4
        return float(beta_distribution.ppf(0.9, 0.04 * n + 1, 0.96 * n))

    first = next(size for size in range(1, 2000) if bound(size) <= 0.1)
    assert first == 214 and bound(213) > 0.1
    assert labels_needed(np.array([100]), np.array([4]), 400, 0.1, 0.1).tolist() == [214.0]
    # At R̂ ≥ α no number of labels would do.
    assert np.isnan(labels_needed(np.array([100]), np.array([10]), 400, 0.1, 0.1)).all()
    # Integer counts agree with the Clopper–Pearson bound: 0 errors in 30 pass at α = 0.0739 (1 − 0.1^(1/30)).
    assert clopper_pearson_upper(0, 30, 0.1) <= 0.0739
    assert labels_needed(np.array([30]), np.array([0]), 30, 0.0739, 0.1).tolist() == [30.0]


def test_a_judge_that_covers_nothing_says_how_close_it_came_and_how_many_labels_would_do() -> None:
    # 400 items, confidence 0.0025 … 1.0; wrong on the 10 most confident and on every 4th item below: from the start
    # (100 covered: 10 + 22 errors) nothing passes at α = 0.1, and nowhere is R̂ under α.
    confidence = np.arange(1, 401) / 400
    rank = np.arange(400)[::-1]
    correct = ~((rank < 10) | (rank % 4 == 3))
    fitted = calibrate_judge("judge", confidence, correct, 0.1, 0.1)
    assert fitted.threshold is None and fitted.n_tested == 1 and fitted.start_covered == 100
    shortfall = fitted.shortfall
    assert shortfall.risk >= 0.1 and shortfall.n_calibration_needed is None
    assert shortfall.risk_bound == pytest.approx(float(clopper_pearson_upper(shortfall.n_errors, shortfall.n_covered,
                                                                            0.1)))
    # Wrong on the 10 most confident and on 1 in 40 below: the start (100 covered, 12 errors, bound 0.173) fails.
    # Covering all 400 (19 errors, R̂ = 0.0475) has bound 0.0642: under α = 0.1, so the test stopped at its start above
    # a λ that passes (n_calibration_needed 68 ≤ 400 says so too). At α = 0.06 about 655 items would do: n' = 655,
    # k' = 0.0475·655 = 31.1, the 0.9 quantile of Beta(32.1, 623.9) is ≤ 0.06, and 655 items start at 100 ≤ 655.
    correct = ~((rank < 10) | ((rank >= 10) & (rank % 40 == 0)))
    assert float(clopper_pearson_upper(12, 100, 0.1)) == pytest.approx(0.1726, abs=1e-4)
    at_010 = calibrate_judge("judge", confidence, correct, 0.1, 0.1)
    at_006 = calibrate_judge("judge", confidence, correct, 0.06, 0.1)
    for fitted in (at_010, at_006):
        assert fitted.threshold is None and fitted.n_tested == 1
        assert (fitted.shortfall.n_covered, fitted.shortfall.n_errors) == (400, 19)
        assert fitted.shortfall.risk_bound == pytest.approx(float(clopper_pearson_upper(19, 400, 0.1)))
        assert fitted.shortfall.risk_bound == pytest.approx(0.0642, abs=1e-4)
    assert at_010.shortfall.n_calibration_needed == 68
    assert at_006.shortfall.n_calibration_needed == 655
    assert beta_distribution.ppf(0.9, 0.0475 * 655 + 1, 0.9525 * 655) <= 0.06 < beta_distribution.ppf(
        0.9, 0.0475 * 654 + 1, 0.9525 * 654)


def simulate(n_draws: int, start: int, never_errs_at_top: bool, seed: int = 0) -> tuple[float, float, int]:
    """(share of draws where the kept items' disagreement is ≤ α, mean share of items kept, draws keeping nothing)
    for 1,000 calibration items, α = δ = 0.1."""
    risk = top_judge_risk if never_errs_at_top else good_judge_risk
    held, kept, n_none = 0, [], 0
    for index in range(n_draws):
        confidence, correct = draw(np.random.default_rng(seed + index), 1000, never_errs_at_top)
        fitted = calibrate_judge("judge", confidence, correct, 0.1, 0.1, start_covered=start)
        held += risk(fitted.threshold) <= 0.1
        kept.append(coverage(fitted.threshold))
        n_none += fitted.threshold is None
    return held / n_draws, float(np.mean(kept)), n_none


def test_over_200_seeded_draws_the_start_at_100_keeps_almost_half_of_a_good_judges_items_with_the_guarantee() -> None:
    held, kept, n_none = simulate(200, START_COVERED, never_errs_at_top=False)
    print(f"good judge, start 100: guarantee held in {held:.3f}, mean kept {kept:.3f}, nothing kept in {n_none}")
    assert held >= 0.9 and held == pytest.approx(0.950, abs=1e-9)
    assert kept >= 0.45 and kept == pytest.approx(0.475, abs=0.001)
    assert n_none == 23
    held_top, kept_top, n_none_top = simulate(200, MIN_COVERED, never_errs_at_top=False)
    print(f"good judge, start 30: guarantee held in {held_top:.3f}, mean kept {kept_top:.3f}, nothing kept in "
          f"{n_none_top}")
    assert held_top >= 0.9 and kept_top < 0.25 and n_none_top > 90


def test_over_200_seeded_draws_a_judge_that_never_errs_at_the_top_keeps_its_guarantee_from_either_start() -> None:
    for start in (START_COVERED, MIN_COVERED):
        held, kept, n_none = simulate(200, start, never_errs_at_top=True, seed=50_000)
        print(f"never errs at the top, start {start}: guarantee held in {held:.3f}, mean kept {kept:.3f}")
        assert held >= 0.9 and kept > 0.6 and n_none == 0


def test_a_two_judge_cascade_started_at_100_keeps_its_guarantee_over_seeded_draws() -> None:
    # The good judge first, then the one that never errs at the top on what the first left (independent confidences);
    # the cascade's disagreement is measured on a fresh 4,000-item test split.
    held, kept = 0, []
    for index in range(100):
        rng = np.random.default_rng(90_000 + index)
        first, first_correct = draw(rng, 5000)
        second, second_correct = draw(rng, 5000, never_errs_at_top=True)
        calibration, test = slice(0, 1000), slice(1000, None)
        cascade = calibrate_cascade(["good", "top"], [first[calibration], second[calibration]],
                                    [first_correct[calibration], second_correct[calibration]], 0.1, 0.1)
        decided = apply_cascade([j.threshold for j in cascade.judges], [first[test], second[test]])
        right = np.where(decided == 0, first_correct[test], second_correct[test])[decided >= 0]
        held += right.size == 0 or right.mean() >= 0.9
        kept.append((decided >= 0).mean())
    print(f"cascade: realised agreement ≥ 0.9 in {held / 100:.2f} of draws, mean kept {np.mean(kept):.3f}")
    assert held / 100 >= 1 - 2 * 0.1 and np.mean(kept) > 0.6
