"""The anytime-valid confidence sequence (measures/ppi/sequence.py): a betting confidence sequence for a bounded
mean sampled without replacement ("Estimating means of bounded random variables by betting", Waudby-Smith &
Ramdas, arXiv:2010.09686) with the judge taken in as PPI++ does. In seeded simulations it covers the
pool's human mean at every look for shares p = 0.02, 0.05, 0.10, 0.30 and for STS ratings, where the Gaussian-
mixture sequence it replaces covered 0.826 at p = 0.10 and 0.614 at p = 0.05 (issue 33); it never has zero width
before every item is labelled, and its capital equals a direct product over the labels. The longer simulation
(500 streams of 300 labels from 2,000 items, with the non-random orders where it fails) is
bench/ppi_sequence_coverage.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

from measures.ppi import sequence as sequence_module
from measures.ppi.estimates import Sample, power_tuned_lambda, z_value
from measures.ppi.sequence import confidence_sequence, predictable_bets, predictable_lambdas


def share_population(rng: np.random.Generator, share: float, size: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """0/1 labels with the given share, and a judge that finds 75% of them and says yes to 4% of the others."""
    truth = (rng.random(size) < share).astype(float)
    judge = np.where(truth == 1, rng.random(size) < 0.75, rng.random(size) < 0.04).astype(float)
    return truth, judge


def sts_population(rng: np.random.Generator, size: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """Similarities on 0–5 in steps of 0.5, and a judge 0.6 too high with noise."""
    truth = np.clip(np.round(rng.normal(2.6, 1.3, size) * 2) / 2, 0, 5)
    judge = np.clip(np.round((truth + 0.6 + rng.normal(0, 0.8, size)) * 2) / 2, 0, 5)
    return truth, judge


def gaussian_mixture_bounds(y: np.ndarray, yhat: np.ndarray, judge_all: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) at t = 20..n of the sequence this one replaced (α = 0.05, t* = 200), for the width it cost:
    the running mean of λ_{i−1}·μ_f + y_i − λ_{i−1}·ŷ_i ± σ̂_t × the normal-mixture boundary of arXiv:2103.06476
    (bench/ppi_sequence_coverage.py has it with its docstring)."""
    lam = predictable_lambdas(y, yhat, float(np.var(judge_all, ddof=1)), len(judge_all))
    psi = lam * judge_all.mean() + (y - lam * yhat)
    t = np.arange(1, len(y) + 1, dtype=float)
    mean = np.cumsum(psi) / t
    sd = np.sqrt(np.maximum(np.cumsum(psi**2) / t - mean**2, 0))
    rho2 = (-2 * math.log(0.05) + math.log(-2 * math.log(0.05) + 1)) / 200
    radius = sd * np.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * np.log(np.sqrt(t * rho2 + 1) / 0.05))
    return (mean - radius)[19:], (mean + radius)[19:]


def coverage(truth: np.ndarray, judge: np.ndarray, bounds: tuple[float, float], rng: np.random.Generator,
             streams: int, labels: int) -> dict[str, tuple[float, int, np.ndarray]]:
    """Per sequence (this one, "betting", and the one it replaced, "mixture"): the share of streams covering the
    pool mean at every look 20..labels, the looks of zero width, and the mean ± at each look."""
    tallies: dict[str, list] = {"betting": [0, 0, []], "mixture": [0, 0, []]}
    for _ in range(streams):
        order = rng.permutation(len(truth))[:labels]
        sequence = confidence_sequence(truth[order], judge[order], judge, bounds)
        for key, (low, high) in (("betting", (sequence.low, sequence.high)),
                                 ("mixture", gaussian_mixture_bounds(truth[order], judge[order], judge))):
            tallies[key][0] += bool(np.all((low <= truth.mean()) & (truth.mean() <= high)))
            tallies[key][1] += int(np.sum(high <= low))
            tallies[key][2].append((high - low) / 2)
    return {key: (covered / streams, zero, np.mean(widths, axis=0)) for key, (covered, zero, widths) in tallies.items()}


@pytest.mark.parametrize(("case", "expected", "replaced"), [
    # seeded figures, 200 streams of 200 labels from 1,000 items: (coverage at every look, mean ± at 20, 100 and
    # 200 labels) of this sequence, and (coverage, looks of zero width, the same ±) of the one it replaced. The
    # price: wider at 20 labels (the old one's narrow early looks were the ones that missed), narrower from 100
    # on (exact bets without replacement instead of a normal approximation with replacement)
    (0.02, (0.995, 0.1670, 0.0381, 0.0235), (0.35, 5984, 0.0758, 0.0411, 0.0299)),
    (0.05, (0.965, 0.2247, 0.0643, 0.0381), (0.77, 834, 0.1774, 0.0701, 0.0484)),
    (0.10, (0.975, 0.2781, 0.0779, 0.0443), (0.94, 45, 0.2353, 0.0826, 0.0565)),
    (0.30, (0.985, 0.4047, 0.0925, 0.0527), (0.98, 0, 0.3017, 0.1027, 0.0705)),
    ("sts", (0.985, 1.4338, 0.2403, 0.1280), (0.985, 0, 0.7312, 0.2292, 0.1562)),
])
def test_the_sequence_covers_at_every_look_for_rare_shares_and_ratings(
        case: float | str, expected: tuple[float, ...], replaced: tuple[float, ...]) -> None:
    rng = np.random.default_rng(33)
    if case == "sts":
        truth, judge = sts_population(rng)
        bounds = (0.0, 5.0)
    else:
        truth, judge = share_population(rng, float(case))
        bounds = (0.0, 1.0)
    results = coverage(truth, judge, bounds, rng, streams=200, labels=200)
    covered, zero_width, half_width = results["betting"]
    assert covered >= 0.95 and zero_width == 0
    at = [round(float(half_width[t - 20]), 4) for t in (20, 100, 200)]
    assert (covered, *at) == pytest.approx(expected, abs=1e-4)
    old_covered, old_zero_width, old_half_width = results["mixture"]
    old_at = [round(float(old_half_width[t - 20]), 4) for t in (20, 100, 200)]
    assert (old_covered, old_zero_width, *old_at) == pytest.approx(replaced, abs=1e-4)


def test_sixty_labels_without_a_rare_label_never_reach_a_target_the_data_cannot_support() -> None:
    """Issue 33's case: the share of "rare" is 6%, the first 60 labels hold none. The Gaussian-mixture sequence
    estimated the variance as 0 and reported [0, 0], "±0.03 reached at 20 labels"."""
    rng = np.random.default_rng(5)
    truth = (rng.random(1000) < 0.06).astype(float)
    judge = np.where(truth == 1, rng.random(1000) < 0.7, rng.random(1000) < 0.03).astype(float)
    order = np.flatnonzero(truth == 0)[:60]  # 60 labels, none "rare" (the pool's share is 0.075)
    sequence = confidence_sequence(truth[order], judge[order], judge, (0.0, 1.0))
    assert np.all(sequence.high > sequence.low) and np.all(sequence.low == 0)
    assert sequence.first_within(0.03) is None
    # 20 zeros leave room for a share up to 0.269, 60 for one up to 0.080 (60 zeros at 0.075 has probability 0.009)
    assert (sequence.high[0], sequence.high[-1]) == pytest.approx((0.269, 0.080), abs=1e-9)


def direct_capitals(x: np.ndarray, labelled_before: np.ndarray, not_yet: np.ndarray, judge_rest: np.ndarray,
                    lam: np.ndarray, n_items: int, bounds: tuple[float, float], bets: np.ndarray,
                    mu: float) -> tuple[list[float], list[float]]:
    """K⁺_t(μ) and K⁻_t(μ) at every t, one label at a time (the product of the module's docstring)."""
    lo, hi = bounds
    up, down, k_up, k_down = [], [], 1.0, 1.0
    for i in range(len(x)):
        m = (n_items * mu - labelled_before[i]) / not_yet[i]
        reach_down = max(m - lo, 0) + lam[i] * (hi - judge_rest[i])
        reach_up = max(hi - m, 0) + lam[i] * (judge_rest[i] - lo)
        k_up *= 1 + min(bets[i], 0.75 / reach_down if reach_down > 0 else math.inf) * (x[i] - m)
        k_down *= 1 - min(bets[i], 0.75 / reach_up if reach_up > 0 else math.inf) * (x[i] - m)
        up.append(k_up)
        down.append(k_down)
    return up, down


def test_the_bounds_are_the_last_grid_values_the_direct_capitals_reject(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sequence_module, "ROWS_PER_CHUNK", 7)  # chunks end inside the run: their seams too
    rng = np.random.default_rng(2)
    truth, judge = sts_population(rng, size=300)
    order = rng.permutation(300)[:60]
    y, yhat = truth[order], judge[order]
    result = confidence_sequence(y, yhat, judge, (0.0, 5.0), min_labels=1)
    lam = predictable_lambdas(y, yhat, float(np.var(judge, ddof=1)), 300)
    not_yet = 300 - np.arange(60)
    labelled_before = np.concatenate([[0], np.cumsum(y)[:-1]])
    judge_rest = (judge.sum() - np.concatenate([[0], np.cumsum(yhat)[:-1]])) / not_yet
    x = y - lam * (yhat - judge_rest)
    bets = predictable_bets(x, 0.0, 5.0, 0.05, 200)
    grid = np.linspace(0, 5, 1001)
    ever_up = np.zeros((60, grid.size), dtype=bool)
    ever_down = np.zeros((60, grid.size), dtype=bool)
    for g, mu in enumerate(grid):
        up, down = direct_capitals(x, labelled_before, not_yet, judge_rest, lam, 300, (0.0, 5.0), bets, mu)
        ever_up[:, g] = np.maximum.accumulate(up) >= 40  # 2/α
        ever_down[:, g] = np.maximum.accumulate(down) >= 40
    proven_low = (np.cumsum(y) + (300 - np.arange(1, 61)) * 0) / 300
    proven_high = (np.cumsum(y) + (300 - np.arange(1, 61)) * 5) / 300
    for t in (0, 6, 7, 20, 59):
        rejected_low, rejected_high = np.flatnonzero(ever_up[t]), np.flatnonzero(ever_down[t])
        low = grid[rejected_low.max()] if rejected_low.size else 0.0
        high = grid[rejected_high.min()] if rejected_high.size else 5.0
        assert result.low[t] == pytest.approx(max(low, proven_low[t]), abs=1e-12)
        assert result.high[t] == pytest.approx(min(high, proven_high[t]), abs=1e-12)
    assert result.high[59] - result.low[59] < result.high[0] - result.low[0]


def test_the_bets_by_hand() -> None:
    # β_1 uses only the pseudo-observation: σ̂² = (5 − 0)²/4 = 6.25, t* = 200: √(2·ln 40/(6.25·200))
    x = np.array([2.0, 3.0, 4.0])
    bets = predictable_bets(x, 0.0, 5.0, 0.05, 200)
    assert bets[0] == pytest.approx(math.sqrt(2 * math.log(40) / (6.25 * 200)), rel=1e-12)
    # β_2: running mean before x_1 is the midpoint 2.5, so (x_1 − 2.5)² = 0.25; σ̂² = (6.25 + 0.25)/2
    assert bets[1] == pytest.approx(math.sqrt(2 * math.log(40) / (3.25 * 200)), rel=1e-12)
    # β_3: the mean of (2.5, 2) is 2.25 and (3 − 2.25)² = 0.5625; σ̂² = (6.5 + 0.5625)/3; past t* the t counts
    assert bets[2] == pytest.approx(math.sqrt(2 * math.log(40) / (7.0625 / 3 * 200)), rel=1e-12)
    assert predictable_bets(x, 0.0, 5.0, 0.05, 2)[2] == pytest.approx(math.sqrt(2 * math.log(40) / (7.0625 / 3 * 3)))


def test_each_label_uses_the_lambda_tuned_on_the_labels_before_it() -> None:
    rng = np.random.default_rng(3)
    truth = np.clip(np.round(rng.normal(4, 1.4, 500)), 1, 7)
    judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, 500)), 1, 7)
    lam = predictable_lambdas(truth[:60], judge[:60], float(np.var(judge, ddof=1)), 500)
    assert lam[:3].tolist() == [0.0, 0.0, 0.0]
    # λ for the 41st label: PPI++'s λ on the first 40 (the unlabelled being the other 460 items)
    expected = power_tuned_lambda(Sample(truth[:40], judge[:40], judge[40:]))
    assert lam[40] == pytest.approx(expected, rel=1e-9)


def test_every_item_labelled_leaves_the_mean_known() -> None:
    y = np.array([0.0, 1.0] * 15)
    sequence = confidence_sequence(y, y, y, (0.0, 1.0))
    assert sequence.low[-1] == sequence.high[-1] == 0.5  # all 30 items labelled: the mean is no longer uncertain
    assert np.all(sequence.high[:-1] > sequence.low[:-1])


def test_peeking_at_a_fixed_n_interval_after_every_label_misses_more_than_the_sequence() -> None:
    """Why a sequence: the people's 95% normal interval looked at after every label from 20 to 300 covers the
    mean at every look in fewer than 90% of 1,000 draws."""
    rng = np.random.default_rng(7)
    truth = np.clip(np.round(rng.normal(4, 1.4, 3000)), 1, 7)
    t = np.arange(1, 301)
    covered = 0
    for _ in range(1000):
        y = truth[rng.permutation(3000)[:300]]
        mean = np.cumsum(y) / t
        sd = np.sqrt(np.maximum(np.cumsum(y**2) / t - mean**2, 0) * t / np.maximum(t - 1, 1))
        looks = slice(19, 300)
        covered += bool(np.all(np.abs(mean - truth.mean())[looks] <= (z_value(0.05) * sd / np.sqrt(t))[looks]))
    assert covered / 1000 < 0.90


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 20 labels"):
        confidence_sequence(np.ones(5), np.ones(5), np.ones(50), (0, 1))
    with pytest.raises(ValueError, match="t\\* must be at least 1"):
        confidence_sequence(np.ones(30), np.ones(30), np.ones(50), (0, 1), t_star=0)
    with pytest.raises(ValueError, match="human values outside the bounds 0–1"):
        confidence_sequence(np.full(30, 2.0), np.ones(30), np.ones(50), (0, 1))
    with pytest.raises(ValueError, match="lo < hi"):
        confidence_sequence(np.ones(30), np.ones(30), np.ones(50), (1, 1))
