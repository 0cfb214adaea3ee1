"""Prediction-powered estimates of a mean: numbers in, estimates and intervals out (numpy and SciPy, no Django).

A judge (an LLM annotator, or imported machine answers) has a value `yhat` for every item; people have a value
`y` for a sample of n of them. The N items without a human value keep only the judge's. PPI++ ("PPI++:
Efficient Prediction-Powered Inference", Angelopoulos, Duchi & Zrnic, arXiv:2311.01453) estimates the human
mean as

    θ̂(λ) = mean(λ·yhat over the N unlabelled) + mean(y − λ·yhat over the n labelled)

whose second term corrects the judge's bias on the labelled items, so the estimate is unbiased for any judge
and any λ; λ is tuned to make its variance smallest (λ = 0: the humans' mean alone, λ = 1: PPI of
"Prediction-Powered Inference", Angelopoulos et al., arXiv:2301.09633). The interval is the normal one,
θ̂ ± z·√(Var(λ·yhat)/N + Var(y − λ·yhat)/n).

Every formula follows ppi-python 0.2.3 exactly (`ppi_py/ppi.py`: `ppi_mean_pointestimate`, `ppi_mean_ci`,
`_calc_lam_glm` with `clip=True`; `ppi_py/baselines.py`: `classical_mean_ci`), so the tests compare with it
to 1e-9: population standard deviations (ddof 0) in the interval and in the covariance of λ's numerator, the
sample variance (ddof 1) of all judge values in its denominator, λ computed around the λ = 1 estimate and
clipped to [0, 1]. Weights (`w` for the labelled items, `w_unlabelled` for the rest) are normalised to sum to
n and N as there; inverse inclusion probabilities make a non-uniform sample estimate the uniform mean.

Degenerate inputs are answered, not crashed on: an estimate that cannot be computed raises `Undefined` with a
reason a person can read (`estimate` turns it into a None with that reason).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats


class Undefined(ValueError):
    """An estimate that cannot be computed from these numbers; the message says why."""


@dataclass(frozen=True)
class Sample:
    """One estimand's numbers: human values y and judge values yhat on the n labelled items, the judge's
    values on the N unlabelled ones, and optional weights (inverse inclusion probabilities)."""

    y: np.ndarray
    yhat: np.ndarray
    yhat_unlabelled: np.ndarray
    w: np.ndarray | None = None
    w_unlabelled: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_unlabelled(self) -> int:
        return int(self.yhat_unlabelled.shape[0])

    @property
    def weighted(self) -> bool:
        return self.w is not None or self.w_unlabelled is not None


@lru_cache(maxsize=64)  # scipy's ppf costs about a millisecond; planners and simulations ask for the same α again
def z_value(alpha: float) -> float:
    """The two-sided normal quantile z_{1−α/2} (1.959964… for α = 0.05)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    return float(stats.norm.ppf(1 - alpha / 2))


def normalised_weights(w: np.ndarray | None, size: int) -> np.ndarray:
    """Weights scaled to sum to `size` (ppi-python's construct_weight_vector); all ones when none are given."""
    if w is None:
        return np.ones(size)
    w = np.asarray(w, dtype=float)
    if w.shape != (size,):
        raise ValueError(f"weights: expected {size} values, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be finite and positive (inverse inclusion probabilities)")
    return w / w.sum() * size


def check_sample(sample: Sample) -> None:
    """Raise ValueError naming the problem when the arrays cannot form a sample; Undefined when n < 2."""
    for name in ("y", "yhat", "yhat_unlabelled"):
        values = getattr(sample, name)
        if values.ndim != 1:
            raise ValueError(f"{name}: expected a one-dimensional array, got shape {values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name}: every value must be a finite number")
    if sample.y.shape != sample.yhat.shape:
        raise ValueError(f"y and yhat must pair up: {sample.y.shape[0]} human values, "
                         f"{sample.yhat.shape[0]} judge values")
    if sample.n < 2:
        raise Undefined(f"undefined: {sample.n} labelled item(s); an interval needs at least 2")


def power_tuned_lambda(sample: Sample) -> float:
    """PPI++'s λ minimising the estimate's variance (ppi-python 0.2.3 `_calc_lam_glm`, d = 1, clipped to
    [0, 1]): λ = Cov(y, yhat) / ((1 + n/N)·Var(yhat over all items)), the covariance around the λ = 1
    estimate with ddof 0, the variance with ddof 1. A judge whose values are all equal carries no
    information: λ = 0 (ppi-python would divide 0 by 0). With no unlabelled item λ = 0: the humans' mean."""
    n, big_n = sample.n, sample.n_unlabelled
    if big_n == 0:
        return 0.0
    w = normalised_weights(sample.w, n)
    w_unl = normalised_weights(sample.w_unlabelled, big_n)
    y, yhat, yhat_unl = (np.asarray(a, dtype=float) for a in (sample.y, sample.yhat, sample.yhat_unlabelled))
    theta_one = (w_unl * yhat_unl).mean() + (w * (y - yhat)).mean()
    grads = w * (y - theta_one)
    grads_hat = w * (yhat - theta_one)
    grads_hat_unl = w_unl * (yhat_unl - theta_one)
    cov = (2 / n) * float(np.sum((grads - grads.mean()) * (grads_hat - grads_hat.mean())))
    var = float(np.var(np.concatenate([grads_hat, grads_hat_unl]), ddof=1))
    if var <= 0:
        return 0.0
    return float(np.clip(cov / (2 * (1 + n / big_n) * var), 0, 1))


def ppi_point_estimate(sample: Sample, lam: float) -> float:
    """θ̂(λ) = mean(w_unl·λ·yhat_unl) + mean(w·(y − λ·yhat)) (ppi-python `ppi_mean_pointestimate` with lam)."""
    w = normalised_weights(sample.w, sample.n)
    if sample.n_unlabelled == 0:
        return float((w * sample.y).mean())
    w_unl = normalised_weights(sample.w_unlabelled, sample.n_unlabelled)
    return float((w_unl * lam * sample.yhat_unlabelled).mean() + (w * (sample.y - lam * sample.yhat)).mean())


def ppi_standard_error(sample: Sample, lam: float) -> float:
    """√(sd(w_unl·λ·yhat_unl)²/N + sd(w·(y − λ·yhat))²/n), population sds (ppi-python `ppi_mean_ci`)."""
    w = normalised_weights(sample.w, sample.n)
    rectifier = float(np.std(w * (sample.y - lam * sample.yhat))) ** 2 / sample.n
    if sample.n_unlabelled == 0:
        return math.sqrt(rectifier)
    w_unl = normalised_weights(sample.w_unlabelled, sample.n_unlabelled)
    imputed = float(np.std(w_unl * (lam * sample.yhat_unlabelled))) ** 2 / sample.n_unlabelled
    return math.sqrt(imputed + rectifier)


def classical_estimate(y: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    """The humans' mean alone and its standard error sd(w·y)/√n, population sd (ppi-python
    `classical_mean_ci`, weights normalised to sum to n)."""
    n = int(y.shape[0])
    w = normalised_weights(w, n)
    return float((w * y).mean()), float(np.std(w * y)) / math.sqrt(n)


def effective_n(n: int, n_unlabelled: int, rho: float) -> float:
    """What n labels are worth with the judge: n(n + N)/(n + (1 − ρ²)N), the number of human labels alone
    that would give the same variance as PPI++ with the optimal λ (Var = σ²(n + (1 − ρ²)N)/(n(n + N)))."""
    return n * (n + n_unlabelled) / (n + (1 - rho**2) * n_unlabelled)


def correlation(y: np.ndarray, yhat: np.ndarray) -> float | None:
    """Pearson ρ between human and judge values on the labelled items; None when either is constant."""
    if np.ptp(y) == 0 or np.ptp(yhat) == 0:
        return None
    return float(np.corrcoef(y, yhat)[0, 1])


@dataclass(frozen=True)
class Estimate:
    """One estimand's PPI++ estimate and interval beside the humans' alone (None with `reason` when undefined)."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    standard_error: float | None
    classical_estimate: float | None
    classical_low: float | None
    classical_high: float | None
    classical_standard_error: float | None
    lam: float | None
    judge_mean_error: float | None  # mean of yhat − y on the labelled items (weighted when weights are given)
    n: int
    n_unlabelled: int
    rho: float | None
    n_effective: float | None
    reason: str = ""

    @property
    def half_width(self) -> float | None:
        return None if self.ci_low is None or self.ci_high is None else (self.ci_high - self.ci_low) / 2

    @property
    def classical_half_width(self) -> float | None:
        if self.classical_low is None or self.classical_high is None:
            return None
        return (self.classical_high - self.classical_low) / 2

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "half_width": self.half_width, "classical_half_width": self.classical_half_width}


def estimate(sample: Sample, alpha: float = 0.05, lam: float | None = None) -> Estimate:
    """The PPI++ estimate with the power-tuned λ (or the λ given), its 1 − α interval, and the classical
    estimate and interval from the humans alone; undefined values are None with the reason."""
    z = z_value(alpha)
    try:
        check_sample(sample)
    except Undefined as undefined:
        return Estimate(None, None, None, None, None, None, None, None, None, None, sample.n, sample.n_unlabelled,
                        None, None, str(undefined))
    lam = power_tuned_lambda(sample) if lam is None else lam
    theta, se = ppi_point_estimate(sample, lam), ppi_standard_error(sample, lam)
    mean, se_classical = classical_estimate(sample.y, sample.w)
    w = normalised_weights(sample.w, sample.n)
    rho = correlation(sample.y, sample.yhat)
    reasons = []
    if sample.n_unlabelled == 0:
        reasons.append("every item is labelled: the estimate is the humans' mean")
    if rho is None:
        reasons.append("ρ undefined: the human or the judge values on the labelled items are all equal")
    return Estimate(
        estimate=theta, ci_low=theta - z * se, ci_high=theta + z * se, standard_error=se,
        classical_estimate=mean, classical_low=mean - z * se_classical, classical_high=mean + z * se_classical,
        classical_standard_error=se_classical, lam=lam,
        judge_mean_error=float((w * (sample.yhat - sample.y)).mean()),
        n=sample.n, n_unlabelled=sample.n_unlabelled, rho=rho,
        n_effective=None if rho is None else effective_n(sample.n, sample.n_unlabelled, rho),
        reason="; ".join(reasons))


@dataclass(frozen=True)
class Difference:
    """θ_a − θ_b for two independent samples (items of two systems), with its interval, PPI++ and classical."""

    a: str
    b: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    classical_estimate: float | None
    classical_low: float | None
    classical_high: float | None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def difference(a: str, first: Estimate, b: str, second: Estimate, alpha: float = 0.05) -> Difference:
    """The difference of two estimates from disjoint sets of items (each system its own items, each labelled
    sample drawn on its own): the estimates subtract and, being independent, their variances add, so the
    interval is (θ_a − θ_b) ± z·√(se_a² + se_b²), each se with its own λ."""
    z = z_value(alpha)
    if first.estimate is None or second.estimate is None:
        why = first.reason if first.estimate is None else second.reason
        return Difference(a, b, None, None, None, None, None, None, f"undefined: {why}")
    assert first.standard_error is not None and second.standard_error is not None
    assert first.classical_estimate is not None and second.classical_estimate is not None
    assert first.classical_standard_error is not None and second.classical_standard_error is not None
    theta = first.estimate - second.estimate
    se = math.hypot(first.standard_error, second.standard_error)
    mean = first.classical_estimate - second.classical_estimate
    se_classical = math.hypot(first.classical_standard_error, second.classical_standard_error)
    return Difference(a, b, theta, theta - z * se, theta + z * se, mean, mean - z * se_classical,
                      mean + z * se_classical)


def active_estimate(y: np.ndarray, yhat: np.ndarray, w: np.ndarray, judge_mean: float, n_items: int,
                    alpha: float = 0.05, in_scope: np.ndarray | None = None, lam: float | None = None) -> Estimate:
    """The PPI estimate for labels drawn unevenly with known probabilities ("Active Statistical Inference",
    Zrnic & Candès, arXiv:2403.03208): each draw i has weight w_i = 1/(M·p_i) (p_i its draw probability, M the
    items estimated over) and the judge's mean over all M items, μ_f, is known (it answered every item). With
    a_i = w_i·y_i and b_i = w_i·yhat_i − μ_f the estimate is mean(a − λb), λ = Cov(a, b)/Var(b) clipped to
    [0, 1], and its standard error sd(a − λb)/√n (ddof 1); the classical one is mean(a) ± z·sd(a)/√n.
    `n_unlabelled` reports `n_items`, the M items the judge's mean is taken over.
    `in_scope` (a 0/1 per draw) estimates a system's mean from every draw, zero outside it (w then uses
    M = the system's items). Not ppi-python's weighted form: its λ and variance, made for covariate shift,
    gave wider intervals than uniform sampling in this setting (docs/ppi.md, "Active sampling"). With the weights
    multiplied into the values it is ppi-python's `ppi_mean_ci(w·y, w·yhat, μ_f on every item, lam=λ)`: the same
    estimate, the interval up to the sample variance's n/(n − 1) (tests/test_ppi_confidence.py). `lam` fixes λ."""
    z = z_value(alpha)
    n = int(y.shape[0])
    scope = np.ones(n) if in_scope is None else np.asarray(in_scope, dtype=float)
    inside = int(scope.sum())
    if n < 2 or inside < 2:
        return Estimate(None, None, None, None, None, None, None, None, None, None, inside, n_items, None, None,
                        f"undefined: {inside} labelled draw(s); an interval needs at least 2")
    a = scope * w * y
    b = scope * w * yhat - judge_mean
    var_b = float(np.var(b, ddof=1))
    if lam is None:
        lam = 0.0 if var_b <= 0 else float(np.clip(np.cov(a, b)[0, 1] / var_b, 0, 1))
    terms = a - lam * b
    theta, se = float(terms.mean()), float(terms.std(ddof=1)) / math.sqrt(n)
    mean, se_classical = float(a.mean()), float(a.std(ddof=1)) / math.sqrt(n)
    error = float(np.sum(scope * w * (yhat - y)) / np.sum(scope * w))
    worth = None if se == 0 else inside * (se_classical / se) ** 2
    return Estimate(theta, theta - z * se, theta + z * se, se, mean, mean - z * se_classical,
                    mean + z * se_classical, se_classical, lam, error, inside, n_items,
                    correlation(y[scope > 0], yhat[scope > 0]),
                    worth, "active sampling: each draw weighted by 1/(M·p); n_effective = n·(classical se/se)²")
