"""An anytime-valid confidence sequence for the same mean as the PPI++ interval (no Django), so a researcher may
look after every batch, and stop when it is narrow enough, without inflating the error.

The judge answered every one of the task's M items, so the mean of its values over them, μ_f, is known
exactly. With labels arriving in a uniformly random order (a `ppi_batch` is drawn so), the i-th labelled item
gives

    ψ_i = λ_{i−1}·μ_f + (y_i − λ_{i−1}·yhat_i),

whose expectation given the past is the mean of the human values over the M items for any λ_{i−1} fixed before
item i is seen; λ_{i−1} is PPI++'s power-tuned λ on the first i − 1 labels (0 before three), so the terms
are martingale differences around the estimand. Their running mean is surrounded by the two-sided Gaussian-
mixture asymptotic confidence sequence of "Time-uniform central limit theory and asymptotic confidence
sequences" (Waudby-Smith, Arnold, Wu, Howard & Ramdas, arXiv:2103.06476, the Robbins normal-mixture
boundary):

    ψ̄_t ± σ̂_t·√( 2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α) ),

σ̂_t the standard deviation of ψ_1..ψ_t, and ρ chosen to make the sequence tightest at t* labels
(ρ² = (−2 log α + log(−2 log α + 1))/t*, same paper). t* must be fixed before the first look (default 200
labels; the width at the end changes little with it: at 560 labels of the worked example of docs/ppi.md,
±0.104 to ±0.110 for t* from 100 to 2,000): one ρ makes one sequence, valid at every t at once,
asymptotically, while a ρ re-tuned at each look would not be. It is wider than the fixed-n interval at the
same t, which is the price of looking as often as one likes. Looks start at `min_labels` (default 20): the
asymptotics need some labels before the first look.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_LABELS = 20
DEFAULT_T_STAR = 200


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


def mixture_rho(alpha: float, t_star: int) -> float:
    """ρ making the normal-mixture boundary tightest at t* (arXiv:2103.06476)."""
    log_term = -2 * math.log(alpha)
    return math.sqrt((log_term + math.log(log_term + 1)) / t_star)


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


def confidence_sequence(y: np.ndarray, yhat: np.ndarray, judge_all: np.ndarray, alpha: float = 0.05,
                        t_star: int = DEFAULT_T_STAR, min_labels: int = MIN_LABELS) -> Sequence:
    """The sequence for labels (y, yhat) in the order they arrived, the judge's values on all M items in
    `judge_all` (labelled ones included), tuned for `t_star` labels (fixed before the first look)."""
    y, yhat, judge_all = (np.asarray(a, dtype=float) for a in (y, yhat, judge_all))
    n = len(y)
    if n < max(min_labels, 2):
        raise ValueError(f"a confidence sequence needs at least {max(min_labels, 2)} labels, got {n}")
    lam = predictable_lambdas(y, yhat, float(np.var(judge_all, ddof=1)), len(judge_all))
    psi = lam * judge_all.mean() + (y - lam * yhat)
    t = np.arange(1, n + 1, dtype=float)
    mean = np.cumsum(psi) / t
    variance = np.maximum(np.cumsum(psi**2) / t - mean**2, 0)
    if t_star < 1:
        raise ValueError(f"t* must be at least 1 label, got {t_star}")
    rho2 = mixture_rho(alpha, t_star) ** 2
    radius = np.sqrt(variance) * np.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))
    keep = slice(min_labels - 1, n)
    return Sequence(t[keep].astype(int), mean[keep], (mean - radius)[keep], (mean + radius)[keep], lam[keep])
