"""How many more human labels a PPI++ interval needs to reach a target half-width (no Django).

With n of the M items labelled and N = M − n not, PPI++'s variance at λ is (ppi-python 0.2.3's interval,
`measures/ppi/estimates.py`)

    V(λ; n, N) = λ²·Var(yhat_unlabelled)/N + (Var(y) − 2λ·Cov(y, yhat) + λ²·Var(yhat_labelled))/n

and its power-tuned λ = Cov(y, yhat)/((1 + n/N)·Var(yhat over all items)), clipped to [0, 1]. Labelling m more
items uniformly moves n to n + m and N to N − m; the planner keeps today's variance and covariance estimates,
re-tunes λ for every m, and returns the smallest m whose half-width z·√V is at most the target. At m = 0 it
reproduces today's half-width exactly (unweighted samples).

Both ends are estimates: the projection rests on today's n labels, the half-width measured after labelling
on the n' = n + m labels then, which include today's. A standard deviation estimated from k values has a
relative standard error of about 1/√(2k), and for nested samples the two estimates differ by about
√(1/(2n) − 1/(2n')) relatively. A plan that only met the target on the projection would miss it about half the
time, so by default the projection must be under the target by that much at one-sided 95% (`assurance`
z = 1.645): z·√V·(1 + 1.645·√(1/(2n) − 1/(2n'))) ≤ W; `assurance=0` plans on the projection alone
(docs/ppi.md, "Planning").

`active_labels_needed` plans an active draw instead (measures/ppi/active.py: m independent draws from q,
pooled with the draws so far, each weighed by 1/(M·p) with p the mixture): from today's draws it projects the
per-draw variance Var_p(w·(y − λ·yhat)) of the mixture after m more draws, λ re-tuned for it, and returns the
smallest m whose half-width (with the same assurance margin) is at most the target, with the number of new
items those m draws are expected to reach (docs/ppi.md, "Confidence-driven sampling").
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from measures.ppi.estimates import Sample, Undefined, check_sample, power_tuned_lambda, ppi_standard_error, z_value


@dataclass(frozen=True)
class Plan:
    """`n_more` more uniformly drawn labels (None: unreachable) for `target_half_width`."""

    target_half_width: float
    n_labelled: int
    n_items: int
    half_width_now: float | None
    n_more: int | None
    half_width_planned: float | None
    lambda_planned: float | None
    assurance: float = 0.0
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def projected_half_widths(sample: Sample, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Half-widths and tuned λ for n, n + 1, …, M labelled items (index m = m more labels)."""
    y, yhat, yhat_unl = sample.y, sample.yhat, sample.yhat_unlabelled
    n, total = sample.n, sample.n + sample.n_unlabelled
    var_y = float(np.var(y))
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var_labelled = float(np.var(yhat))
    var_unlabelled = float(np.var(yhat_unl)) if yhat_unl.size else var_labelled
    var_all = float(np.var(np.concatenate([yhat, yhat_unl]), ddof=1))
    n_new = np.arange(n, total + 1, dtype=float)
    unlabelled = total - n_new
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(unlabelled > 0, cov / ((1 + n_new / unlabelled) * var_all), 0.0) if var_all > 0 else \
            np.zeros_like(n_new)
        lam = np.clip(np.nan_to_num(lam), 0, 1)
        imputed = np.where(unlabelled > 0, lam**2 * var_unlabelled / unlabelled, 0.0)
    variance = imputed + (var_y - 2 * lam * cov + lam**2 * var_labelled) / n_new
    return z_value(alpha) * np.sqrt(np.maximum(variance, 0)), lam


DEFAULT_ASSURANCE = 1.645  # one-sided 95%


def labels_needed(sample: Sample, target_half_width: float, alpha: float = 0.05,
                  assurance: float = DEFAULT_ASSURANCE) -> Plan:
    """The smallest number of further uniformly drawn labels whose PPI++ interval is at most
    ±target_half_width, from the current variance estimates with λ re-tuned; None when even labelling
    every item would not reach it (the reason gives the half-width that would)."""
    if not target_half_width > 0 or not math.isfinite(target_half_width):
        raise ValueError(f"target half-width must be a positive number, got {target_half_width!r}")
    total = sample.n + sample.n_unlabelled
    try:
        check_sample(sample)
    except Undefined as undefined:
        return Plan(target_half_width, sample.n, total, None, None, None, None, assurance,
                    f"cannot plan: {undefined}")
    now = z_value(alpha) * ppi_standard_error(sample, power_tuned_lambda(sample))
    widths, lam = projected_half_widths(sample, alpha)
    n_new = np.arange(sample.n, total + 1)
    margin = 1 + assurance * np.sqrt(1 / (2 * sample.n) - 1 / (2 * n_new))
    reached = np.flatnonzero(widths * margin <= target_half_width)
    note = "planned as a uniform draw; the current weights are not projected" if sample.weighted else ""
    if reached.size == 0:
        return Plan(target_half_width, sample.n, total, now, None, None, None, assurance,
                    f"not reachable: with all {total} items labelled the half-width would be ±{widths[-1]:.4g}")
    m = int(reached[0])
    return Plan(target_half_width, sample.n, total, now, m, float(widths[m]), float(lam[m]), assurance, note)


@dataclass(frozen=True)
class ActivePlan(Plan):
    """A plan for `n_draws` more independent draws from q, expected to reach `n_more` items without a label."""

    n_draws: int | None = None


ACTIVE_DRAWS_PER_STEP = 1024  # draw counts whose projection is computed at once (memory: this × the draws so far)


def active_labels_needed(y: np.ndarray, yhat: np.ndarray, draw_weights: np.ndarray, q_at_draws: np.ndarray,
                         q_unlabelled: np.ndarray, n_items: int, n_labelled: int,
                         target_half_width: float, alpha: float = 0.05,
                         assurance: float = DEFAULT_ASSURANCE, max_draws: int | None = None) -> ActivePlan:
    """The fewest further draws from q (and the new items they are expected to reach) for which the active
    estimate's interval (estimates.active_estimate) is projected at most ±target_half_width.

    `y`, `yhat`, `draw_weights` are today's labelled draws (a uniform sample: one per labelled item, weights 1)
    with their weights 1/(M·p₀); `q_at_draws` is q at those draws' items, `q_unlabelled` at the items without a
    label. A population mean of g is estimated as Σ w₀·g / Σ w₀ over today's draws, so the projection needs no
    label it does not have; moments and means come from the same draws, so the projected variance is one (at
    no more draws and weights 1 it is the labelled items' variance of y − λ·yhat, λ their Cov/Var). None when
    even `max_draws` (default 20·M) would not reach the target."""
    if not target_half_width > 0 or not math.isfinite(target_half_width):
        raise ValueError(f"target half-width must be a positive number, got {target_half_width!r}")
    y, yhat, w0, q = (np.asarray(a, dtype=float) for a in (y, yhat, draw_weights, q_at_draws))
    n0 = int(y.size)
    if n0 < 2:
        return ActivePlan(target_half_width, n_labelled, n_items, None, None, None, None, assurance,
                          f"cannot plan: {n0} labelled draw(s); a plan needs at least 2")
    z = z_value(alpha)
    share = w0 / w0.sum()
    p0 = 1 / (n_items * w0)
    mu_y, mu_f = float(share @ y), float(share @ yhat)
    q_new = np.asarray(q_unlabelled, dtype=float)
    max_draws = 20 * n_items if max_draws is None else max_draws
    best: tuple[int, float, float, float] | None = None
    now: float | None = None
    for start in range(0, max_draws + 1, ACTIVE_DRAWS_PER_STEP):
        m = np.arange(start, min(start + ACTIVE_DRAWS_PER_STEP, max_draws + 1), dtype=float)
        p = (n0 * p0[None, :] + m[:, None] * q[None, :]) / (n0 + m[:, None])
        scaled = share[None, :] / (n_items * p)  # w₀-weighted mean of g/(M·p)
        second_y, cross, second_f = scaled @ (y * y), scaled @ (y * yhat), scaled @ (yhat * yhat)
        var_f = second_f - mu_f**2
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(var_f > 0, (cross - mu_y * mu_f) / var_f, 0.0)
        lam = np.clip(np.nan_to_num(lam), 0, 1)
        variance = second_y - 2 * lam * cross + lam**2 * second_f - (mu_y - lam * mu_f) ** 2
        widths = z * np.sqrt(np.maximum(variance, 0) / (n0 + m))
        if now is None:
            now = float(widths[0])
        last_width = float(widths[-1])
        # The margin is at least 1, so only draw counts already within the target unmargined can qualify.
        for k in np.flatnonzero(widths <= target_half_width):
            reached = float(np.sum(-np.expm1(m[k] * np.log1p(-q_new))))  # Σ 1 − (1 − q)^m over unlabelled items
            margin = 1 + assurance * math.sqrt(max(1 / (2 * n_labelled) - 1 / (2 * (n_labelled + reached)), 0))
            if widths[k] * margin <= target_half_width:
                best = (int(m[k]), reached, float(widths[k]), float(lam[k]))
                break
        if best is not None:
            break
    if best is None:
        return ActivePlan(target_half_width, n_labelled, n_items, now, None, None, None, assurance,
                          f"not reachable: {max_draws} more draws would give ±{last_width:.4g}")
    draws, reached, width, lam_planned = best
    return ActivePlan(target_half_width, n_labelled, n_items, now, math.ceil(reached - 1e-9), width,
                      lam_planned, assurance, "planned as an active draw", n_draws=draws)
