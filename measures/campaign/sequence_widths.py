"""How wide the anytime-valid confidence sequence is expected to be after t labels, and so how many labels a
target half-width needs: with the judge (the campaign's plans) and without it (what people alone would need).

The sequence (agreement/ppi/sequence.py; "Estimating means of bounded random variables by betting",
Waudby-Smith & Ramdas, arXiv:2010.09686) rejects a mean μ once a bettor's capital reaches 2/α. Its i-th label
contributes x_i = y_i − λ·(ŷ_i − r_i) with variance σ² around its conditional mean m_i(μ*), and a μ at distance
d from the true mean shifts m_i by c_i·d, c_i = M/(M − i + 1) (sampling without replacement: the later labels
say more about the few items left). With the sequence's own bets β_i (its predictable plug-in,
√(2·log(2/α)/(σ̂²_{i−1}·max(i, t*))), σ̂² the running variance started at the scale's largest, capped at
BET_SHARE of the largest safe bet) the expected log-capital against μ* ± d after t labels is, to second order,

    A·d − B·d² − C,   A = Σ β_i·c_i,   B = Σ β_i²·c_i²/2,   C = Σ β_i²·σ²/2,

so the projected half-width at t is the smaller root of A·d − B·d² − C = log(2/α). It is an expectation: the
realised sequence is narrower or wider by the noise of the labels, which is why a plan adds the PPI planner's
assurance margin (agreement/ppi/planner.py) and why a campaign stops on the realised sequence, never on the
projection. `tests/test_campaign_engine.py` compares the projection with realised sequences.

**People alone** (`people_only_labels`) is defined as the same method without the judge: the same sequence with
λ = 0 (x_i = y_i, σ² the people's variance), tuned for its own size (t* the labels it is projected to need), and
projected the same way. It is what a campaign run with people only, stopping by the same valid rule, would
need; `fixed_n_people_labels` is the smaller figure of a study that fixes n in advance and looks once,
(z·sd/W)² (the PPI planner's projection with λ = 0, without margin).
"""
from __future__ import annotations

import math

import numpy as np

from measures.ppi.estimates import z_value
from measures.ppi.sequence import BET_SHARE

T_STAR_ROUNDS = 4  # fixed-point rounds tuning a study's t* to its own projected size


def bet_cap(mean: float, judge_mean: float, lam: float, bounds: tuple[float, float]) -> float:
    """The sequence's cap on a bet near the mean: BET_SHARE over the farthest x − m can move against a bettor
    (agreement/ppi/sequence.py `_bounds`), evaluated at the estimated mean and the judge's mean."""
    lo, hi = bounds
    reach_down = max(mean - lo, 0.0) + lam * (hi - judge_mean)
    reach_up = max(hi - mean, 0.0) + lam * (judge_mean - lo)
    return BET_SHARE / max(reach_down, reach_up, 1e-12)


def projected_half_widths(variance: float, n_items: int, bounds: tuple[float, float], alpha: float, t_star: int,
                          cap: float, up_to: int | None = None) -> np.ndarray:
    """The projected half-width after t = 1..up_to labels (default all M items) for labels whose x vary by
    `variance` around their mean; index t − 1. At t = M the mean is known: 0."""
    lo, hi = bounds
    last = n_items if up_to is None else min(up_to, n_items)
    i = np.arange(1, last + 1, dtype=float)
    running = ((hi - lo) ** 2 / 4 + (i - 1) * max(variance, 0.0)) / i  # σ̂²_{i−1} with its pseudo-observation
    log_level = math.log(2 / alpha)
    beta = np.minimum(np.sqrt(2 * log_level / (running * np.maximum(i, t_star))), cap)
    shift = n_items / (n_items - i + 1)
    a = np.cumsum(beta * shift)
    b = np.cumsum(beta**2 * shift**2) / 2
    c = np.cumsum(beta**2) * max(variance, 0.0) / 2
    discriminant = a**2 - 4 * b * (c + log_level)
    with np.errstate(invalid="ignore", divide="ignore"):
        width = np.where(discriminant >= 0, (a - np.sqrt(np.maximum(discriminant, 0))) / (2 * b), hi - lo)
    width = np.minimum(width, (hi - lo) * (n_items - i) / n_items)  # never wider than the labels alone prove
    return np.maximum(width, 0.0)


def assurance_margin(n_labelled: int, n_total: np.ndarray | int, assurance: float) -> np.ndarray:
    """The PPI planner's margin, 1 + z·√(1/(2n) − 1/(2n')), for variance estimated on n labels and used at n'."""
    if n_labelled < 2 or assurance == 0:
        return np.ones_like(np.asarray(n_total, dtype=float))
    n_new = np.maximum(np.asarray(n_total, dtype=float), n_labelled)
    return 1 + assurance * np.sqrt(1 / (2 * n_labelled) - 1 / (2 * n_new))


def labels_to_reach(target_half_width: float, variance: float, n_items: int, bounds: tuple[float, float],
                    alpha: float, t_star: int, cap: float, n_labelled: int = 0, assurance: float = 0.0) -> int:
    """The fewest labels (in all, not more) whose projected half-width, times the assurance margin for a variance
    estimated on `n_labelled` labels, is within the target; M when only labelling every item would do."""
    widths = projected_half_widths(variance, n_items, bounds, alpha, t_star, cap)
    t = np.arange(1, n_items + 1)
    within = np.flatnonzero(widths * assurance_margin(n_labelled, t, assurance) <= target_half_width)
    return int(t[within[0]]) if within.size else n_items


def self_tuned_labels(target_half_width: float, variance: float, n_items: int, bounds: tuple[float, float],
                      alpha: float, cap: float, start: int = 200) -> tuple[int, int]:
    """(labels, t*): the labels a sequence tuned for its own size is projected to need, t* found by a few
    fixed-point rounds (t* ← the labels projected with t*)."""
    t_star = start
    for _ in range(T_STAR_ROUNDS):
        labels = labels_to_reach(target_half_width, variance, n_items, bounds, alpha, t_star, cap)
        if labels == t_star:
            break
        t_star = labels
    return labels, t_star


def people_only_labels(human_values: np.ndarray, n_items: int, target_half_width: float,
                       bounds: tuple[float, float], alpha: float = 0.05) -> int:
    """What people alone would need for ±target: the same sequence with λ = 0 and t* tuned to its own size,
    projected from the people's variance on `human_values` (the labels so far; before any, the judge's values on
    the pool stand in for them). Capped at the pool's size (every item labelled: the mean is known)."""
    values = np.asarray(human_values, dtype=float)
    cap = bet_cap(float(values.mean()), float(values.mean()), 0.0, bounds)
    labels, _t_star = self_tuned_labels(target_half_width, float(np.var(values)), n_items, bounds, alpha, cap)
    return labels


def fixed_n_people_labels(human_values: np.ndarray, target_half_width: float, alpha: float = 0.05) -> int:
    """A people-only study that fixes n in advance and looks once: ⌈(z·sd/W)²⌉, the normal interval of the
    people's mean (the PPI planner's projection at λ = 0, without its margin or a finite-pool correction)."""
    sd = float(np.std(np.asarray(human_values, dtype=float)))
    return math.ceil((z_value(alpha) * sd / target_half_width) ** 2)
