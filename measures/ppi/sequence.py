"""An anytime-valid confidence sequence for the same mean as the PPI++ interval (no Django), so a researcher may
look after every batch, and stop when it is narrow enough, without inflating the error.

It is a betting confidence sequence for a bounded mean, sampled without replacement ("Estimating means of
bounded random variables by betting", Waudby-Smith & Ramdas, arXiv:2010.09686: its predictable plug-in bets,
and its capital process for sampling without replacement), with the judge taken in as PPI++ does. It needs no
normal approximation, so it holds from the first label, and it cannot collapse: a share whose label nobody
has chosen yet keeps the width the bounds of the scale allow (an earlier Gaussian-mixture sequence estimated
the variance, which was 0 on 20 labels without a "rare", and reported [0, 0]: docs/ppi.md, "Stopping").

The task has M items; the judge answered all of them, people label them one at a time in a uniformly random
order (a `ppi_batch` is drawn so). Before the i-th label, the judge's mean over the M − i + 1 items not yet
labelled, r_i, is known exactly, and a hypothesised human mean μ over all M items fixes the human mean of those
items, m_i(μ) = (M·μ − Σ_{j<i} y_j)/(M − i + 1). The i-th label gives

    x_i = y_i − λ_i·(ŷ_i − r_i),

whose expectation given the past is m_i(μ*) for the true mean μ*, for any λ_i fixed before item i is seen:
λ_i is PPI++'s power-tuned λ on the first i − 1 labels (0 before three), so a judge that goes with the people
makes x_i vary less than y_i, exactly as it narrows the PPI++ interval. Two bettors then bet on x_i − m_i(μ),
one that μ is too small, one that it is too large:

    K⁺_t(μ) = Π_{i≤t} (1 + β⁺_i(μ)·(x_i − m_i(μ))),    K⁻_t(μ) = Π_{i≤t} (1 − β⁻_i(μ)·(x_i − m_i(μ))).

At μ* each is a nonnegative martingale, so by Ville's inequality it ever reaches 2/α with probability at most
α/2; the sequence is the μ neither has ever driven to 2/α (the running intersection over the looks). The bets
are the paper's predictable plug-in, β_i = √(2·log(2/α) / (σ̂²_{i−1}·max(i, t*))), σ̂² the running variance of
the x with one pseudo-observation of the largest variance the scale allows, ((hi − lo)/2)²; tuned with t*
(default 200 labels; it must be fixed before the first look) instead of the paper's i·log(1 + i), which makes
the sequence tightest near t* labels and still shrink after. Each bet is capped at 3/4 of the largest bet that
keeps the capital positive whatever the label (from the scale's bounds: lo ≤ y, ŷ ≤ hi), which keeps K⁺
nonincreasing and K⁻ nondecreasing in μ, so each side's rejected set is a half-line. Neither bet depends on
anything but the labels before i, so the guarantee is exact, not asymptotic: P(μ* is outside some look) ≤ α.

The sequence is computed on a grid of GRID_STEPS + 1 values of μ across the scale; each bound is the last grid
value rejected (at most one grid step wider than exact, never narrower), and never wider than what the labels
alone prove (the unlabelled items at the scale's ends). When every item is labelled the mean is known and the
width is 0; before that no look has zero width. Should both bettors reject every value (probability ≤ α, or
labels not in a random order) the sequence keeps its last interval. A look's `estimate` is the running PPI
estimate, the mean of λ_i·μ_f + y_i − λ_i·ŷ_i (μ_f the judge's mean over all items), kept inside the look's
interval. Looks are listed from `min_labels` (default 20) on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_LABELS = 20
DEFAULT_T_STAR = 200
GRID_STEPS = 1000  # values of μ tried across the scale: bounds are exact to (hi − lo)/1000, erring wide
BET_SHARE = 0.75  # of the largest bet keeping the capital positive (the paper's c: 1/2 or 3/4)
ROWS_PER_CHUNK = 32  # labels computed at once: small, so the grid values rejected meanwhile drop out early


@dataclass(frozen=True)
class Sequence:
    """The sequence at every look t = min_labels..n (index 0 is t = min_labels)."""

    t: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray  # λ used for the t-th label

    def half_width(self) -> np.ndarray:
        return (self.high - self.low) / 2

    def first_within(self, target_half_width: float) -> int | None:
        """The first number of labels at which the sequence is at most ±target wide, or None."""
        hits = np.flatnonzero(self.half_width() <= target_half_width)
        return None if hits.size == 0 else int(self.t[hits[0]])


def predictable_lambdas(y: np.ndarray, yhat: np.ndarray, judge_variance: float, n_items: int) -> np.ndarray:
    """λ_{i−1} for i = 1..n: PPI++'s power-tuned λ (cov/((1 + k/N)·Var(yhat)), clipped to [0, 1]) on the first
    k = i − 1 labels, with N = M − k unlabelled; 0 while k < 3 or the judge is constant. Running sums, O(n)."""
    k = np.arange(len(y), dtype=float)  # labels before item i
    with np.errstate(divide="ignore", invalid="ignore"):
        sum_y, sum_f = np.concatenate([[0], np.cumsum(y)[:-1]]), np.concatenate([[0], np.cumsum(yhat)[:-1]])
        sum_yf = np.concatenate([[0], np.cumsum(y * yhat)[:-1]])
        cov = sum_yf / k - (sum_y / k) * (sum_f / k)
        unlabelled = n_items - k
        lam = cov / ((1 + k / unlabelled) * judge_variance) if judge_variance > 0 else np.zeros_like(k)
    lam = np.where((k >= 3) & (unlabelled > 0), np.nan_to_num(lam), 0.0)
    return np.clip(lam, 0, 1)


def predictable_bets(x: np.ndarray, lo: float, hi: float, alpha: float, t_star: int) -> np.ndarray:
    """β_i for i = 1..n from x_1..x_{i−1}: √(2·log(2/α)/(σ̂²_{i−1}·max(i, t*))), σ̂² the running variance of the
    x around their running mean, each with one pseudo-observation (the scale's midpoint, its largest variance)."""
    n = len(x)
    i = np.arange(1, n + 1, dtype=float)
    running_mean = ((lo + hi) / 2 + np.concatenate([[0], np.cumsum(x)])) / np.arange(1, n + 2)
    squared = (x - running_mean[:-1]) ** 2
    variance = ((hi - lo) ** 2 / 4 + np.concatenate([[0], np.cumsum(squared)[:-1]])) / i
    return np.sqrt(2 * math.log(2 / alpha) / (variance * np.maximum(i, t_star)))


def confidence_sequence(y: np.ndarray, yhat: np.ndarray, judge_all: np.ndarray, bounds: tuple[float, float],
                        alpha: float = 0.05, t_star: int = DEFAULT_T_STAR, min_labels: int = MIN_LABELS) -> Sequence:
    """The sequence for labels (y, yhat) in the order they arrived, the judge's values on all M items in
    `judge_all` (labelled ones included), every value within `bounds` = (lo, hi) (the estimand's scale: 0–1
    for a share), tuned for `t_star` labels (fixed before the first look)."""
    y, yhat, judge_all = (np.asarray(a, dtype=float) for a in (y, yhat, judge_all))
    lo, hi = (float(b) for b in bounds)
    n, n_items = len(y), len(judge_all)
    if n < max(min_labels, 1):
        raise ValueError(f"a confidence sequence needs at least {max(min_labels, 1)} labels, got {n}")
    if t_star < 1:
        raise ValueError(f"t* must be at least 1 label, got {t_star}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not lo < hi:
        raise ValueError(f"bounds must be (lo, hi) with lo < hi, got {bounds!r}")
    if n > n_items:
        raise ValueError(f"{n} labels of {n_items} items: the judge's values must cover every item")
    for name, values in (("human", y), ("judge", yhat), ("judge", judge_all)):
        if np.any(values < lo - 1e-9) or np.any(values > hi + 1e-9):
            raise ValueError(f"{name} values outside the bounds {lo:g}–{hi:g}: the sequence's guarantee needs them")
    lam = predictable_lambdas(y, yhat, float(np.var(judge_all, ddof=1)) if n_items > 1 else 0.0, n_items)
    i = np.arange(1, n + 1, dtype=float)
    not_yet = n_items - i + 1  # items not labelled before the i-th label
    labelled_before = np.concatenate([[0], np.cumsum(y)[:-1]])
    judge_rest = (judge_all.sum() - np.concatenate([[0], np.cumsum(yhat)[:-1]])) / not_yet  # r_i
    x = y - lam * (yhat - judge_rest)
    low, high = _bounds(x, labelled_before, not_yet, judge_rest, lam, n_items, lo, hi,
                        predictable_bets(x, lo, hi, alpha, t_star), alpha)
    least, most = proven_by_labels(y, n_items, lo, hi)
    low, high = np.maximum(low, least), np.minimum(high, most)
    apart = low > high  # the bets excluded what the labels prove (a miss, probability ≤ α): say what is proven
    low[apart], high[apart] = least[apart], most[apart]
    psi = lam * judge_all.mean() + (y - lam * yhat)  # the running PPI estimate with each label's own λ
    estimate = np.clip(np.cumsum(psi) / i, low, high)
    keep = slice(min_labels - 1, n)
    return Sequence(i[keep].astype(int), estimate[keep], low[keep], high[keep], lam[keep])


def _bounds(x: np.ndarray, labelled_before: np.ndarray, not_yet: np.ndarray, judge_rest: np.ndarray,
            lam: np.ndarray, n_items: int, lo: float, hi: float, bet: np.ndarray, alpha: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) at every t: the running intersection of the two one-sided betting sequences on the grid."""
    n = len(x)
    grid = np.linspace(lo, hi, GRID_STEPS + 1)
    threshold = math.log(2 / alpha)
    log_up = np.zeros(grid.size)  # log K⁺ (the bettor against a μ too small) at every grid value, so far
    log_down = np.zeros(grid.size)
    first_alive, last_alive = 0, grid.size - 1  # grid values neither bettor has driven to 2/α yet
    low, high = np.full(n, lo), np.full(n, hi)
    for start in range(0, n, ROWS_PER_CHUNK):
        chunk = np.arange(start, min(start + ROWS_PER_CHUNK, n))
        columns = slice(first_alive, last_alive + 1)  # rejected values stay rejected: skip them
        remaining_mean = (n_items * grid[columns][None, :] - labelled_before[chunk, None]) / not_yet[chunk, None]
        deviation = x[chunk, None] - remaining_mean  # x_i − m_i(μ)
        # how far x − m can fall below 0 (rise above 0) whatever the label: the caps keep every factor positive
        reach_down = np.maximum(remaining_mean - lo, 0) + (lam[chunk] * (hi - judge_rest[chunk]))[:, None]
        reach_up = np.maximum(hi - remaining_mean, 0) + (lam[chunk] * (judge_rest[chunk] - lo))[:, None]
        with np.errstate(divide="ignore"):
            bet_up = np.minimum(bet[chunk, None], BET_SHARE / reach_down)
            bet_down = np.minimum(bet[chunk, None], BET_SHARE / reach_up)
        up = log_up[columns] + np.cumsum(np.log(np.maximum(1 + bet_up * deviation, 1e-300)), axis=0)
        down = log_down[columns] + np.cumsum(np.log(np.maximum(1 - bet_down * deviation, 1e-300)), axis=0)
        log_up[columns], log_down[columns] = up[-1], down[-1]
        # K⁺ falls as μ grows, so the values it rejected are the first alive ones: count them at each label
        rejected_low = np.sum(np.maximum.accumulate(up, axis=0) >= threshold, axis=1)
        rejected_high = np.sum(np.maximum.accumulate(down, axis=0) >= threshold, axis=1)
        # each bound is the last grid value rejected: a mean not rejected lies beyond it
        low[chunk] = np.where(rejected_low > 0, grid[np.maximum(first_alive + rejected_low - 1, 0)],
                              grid[first_alive - 1] if first_alive > 0 else lo)
        high[chunk] = np.where(rejected_high > 0, grid[np.minimum(last_alive - rejected_high + 1, grid.size - 1)],
                               grid[last_alive + 1] if last_alive < grid.size - 1 else hi)
        crossed = np.flatnonzero(low[chunk] >= high[chunk])
        if crossed.size:  # both bettors rejected one value: the set is empty (probability ≤ α); keep the last
            at = int(chunk[crossed[0]])
            low[at:], high[at:] = (low[at - 1], high[at - 1]) if at > 0 else (lo, hi)
            break
        first_alive += int(rejected_low[-1])
        last_alive -= int(rejected_high[-1])
        if first_alive > last_alive:  # one grid step left between the two rejected sides: as fine as the grid
            low[chunk[-1] + 1:], high[chunk[-1] + 1:] = low[chunk[-1]], high[chunk[-1]]
            break
    return low, high


def proven_by_labels(y: np.ndarray, n_items: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """What the first t labels alone prove whatever the others are: the mean lies between
    (Σy + (M − t)·lo)/M and (Σy + (M − t)·hi)/M (the unlabelled items all at one end of the scale)."""
    t = np.arange(1, len(y) + 1, dtype=float)
    total = np.cumsum(y)
    return (total + (n_items - t) * lo) / n_items, (total + (n_items - t) * hi) / n_items
