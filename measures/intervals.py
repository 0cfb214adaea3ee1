"""Confidence intervals of a human score (HUME Appendix E.1, Table 8), pure: numbers in, (low, high) out.

Which interval applies to which kind is the scorers' choice (kinds/<name>/scorer.py):
Wilson for a proportion, Fisher z for a correlation, the annotator range for clustering and
reranking with two or more annotators, a seeded bootstrap where no closed form applies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from measures.metric_base import Interval, Undefined, is_constant, metric


@metric
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson (1927) score interval for a proportion (statsmodels), HUME's CI for accuracy."""
    if n <= 0:
        raise Undefined("undefined: no scored items")
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


@metric
def fisher_z_interval(
    r: float | None,
    n: int,
    confidence: float = 0.95,
    variance: Literal["fisher", "bonett_wright", "fieller"] = "fisher",
) -> Interval:
    """CI for a correlation through Fisher's z = artanh(r), back-transformed with tanh.

    Var(z) is 1/(n−3) for Pearson's r ("fisher"; also what HUME's Table 8 used for Spearman),
    (1 + r²/2)/(n−3) for Spearman (Bonett & Wright 2000, "bonett_wright") or 1.06/(n−3) (Fieller
    et al. 1957, "fieller").
    """
    if r is None:
        raise Undefined("undefined: no correlation")
    if n <= 3:
        raise Undefined("undefined: Fisher z needs more than 3 items")
    if abs(r) >= 1.0:
        return float(r), float(r)
    numerator = {"fisher": 1.0, "bonett_wright": 1.0 + r * r / 2.0, "fieller": 1.06}[variance]
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * math.sqrt(numerator / (n - 3))
    z = math.atanh(r)
    return math.tanh(z - half), math.tanh(z + half)


@metric
def spearman_interval(rho: float | None, n: int, confidence: float = 0.95) -> Interval:
    """Fisher z CI for Spearman's ρ with the Bonett–Wright (2000) variance (1 + ρ²/2)/(n − 3).

    Chosen over the plain 1/(n−3) because ρ's sampling variance exceeds r's, so the plain variance
    undercovers (Bonett & Wright 2000). HUME's Table 8 used the plain variance: call
    `fisher_z_interval(rho, n)` to reproduce it.
    """
    interval, reason = fisher_z_interval.explain(rho, n, confidence, variance="bonett_wright")
    if interval is None:
        raise Undefined(reason or "undefined")
    return interval


@metric
def annotator_range(scores: Sequence[float | None]) -> Interval:
    """Min–max of the annotators' scores (HUME's CI for clustering and reranking, K = 2)."""
    kept = [s for s in scores if s is not None]
    if not kept:
        raise Undefined("undefined: no annotator score")
    return float(min(kept)), float(max(kept))


@metric
def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> Interval:
    """Seeded (deterministic) BCa bootstrap CI of the mean (scipy), where no closed form applies.

    Falls back to the percentile method when BCa is degenerate, and to [v, v] for a single value
    or identical values (nothing to resample).
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise Undefined("undefined: no values to resample")
    if data.size == 1 or is_constant(data):
        return float(data[0]), float(data[0])
    for method in ("BCa", "percentile"):
        res = stats.bootstrap((data,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                              method=method, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    raise Undefined("undefined: bootstrap gave no finite interval")
