"""Gwet's AC1 (nominal) and AC2 (weighted) agreement coefficients, with standard error and 95% CI.

Pure like `metrics` (no Django). Written from the formulas of K. L. Gwet, *Handbook of Inter-Rater
Reliability*, 4th edition (2014), chapters 2-5 (AC1/AC2 among several raters with missing ratings, the
weights, and the variance conditional on the raters); checked against the numbers that Gwet's R package
irrCAC 1.0 publishes in its README and vignettes (tests/test_metrics_gwet.py). irrCAC's code is not used:
it ships no licence file.

Input is a count table: items × categories, ``table[i, k]`` = raters who put item i in category k (the
same table Fleiss' κ reads, `metrics.count_table`). Items rated by nobody are dropped; items with a single
rating count towards the category prevalences π_k but not towards the observed agreement, as in the
Handbook. For q categories with weights w (q × q, 1 on the diagonal):

    p_a = mean over items with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1)),  r*_ik = Σ_l w_kl r_il
    π_k = mean over items of r_ik / r_i
    p_e = T_w / (q (q − 1)) · Σ_k π_k (1 − π_k),  T_w = Σ_kl w_kl
    AC = (p_a − p_e) / (1 − p_e)

The variance is the Handbook's linearisation over items (finite-population correction 0: the items are a
sample of an infinite population), the CI AC ± t(n − 1, 0.975) · se, cut at 1 above (and −1 below).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from measures.metric_base import Undefined

Weighting = Literal["identity", "ordinal", "linear", "quadratic"]
WEIGHTINGS: tuple[Weighting, ...] = ("identity", "ordinal", "linear", "quadratic")


@dataclass(frozen=True)
class GwetResult:
    """AC1/AC2 with its parts: observed and chance agreement, standard error and confidence interval."""

    coefficient: float
    observed: float
    chance: float
    standard_error: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    weighting: Weighting

    def as_dict(self) -> dict[str, float | int | str | None]:
        return {"value": self.coefficient, "observed": self.observed, "chance": self.chance,
                "standard_error": self.standard_error, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "n_items": self.n_items, "weights": self.weighting}


def weights(values: npt.ArrayLike, weighting: Weighting) -> np.ndarray:
    """The q × q weight matrix of ordered category values (Handbook chapter 3; irrCAC's weights of 1:3 are
    identity 1/0, linear 1/.5/0, quadratic 1/.75/0, ordinal 1/.667/0).

    identity: 1 on the diagonal; linear: 1 − |x_k − x_l| / (max − min); quadratic: 1 − (x_k − x_l)² /
    (max − min)²; ordinal (ranks only): 1 − C(|k − l| + 1, 2) / C(q, 2).
    """
    x = np.asarray(values, dtype=float)
    q = len(x)
    if weighting == "identity" or q < 2:
        return np.eye(q)
    if weighting == "ordinal":
        ranks = np.arange(q)
        spread = np.abs(ranks[:, None] - ranks[None, :]) + 1
        pairs = spread * (spread - 1) / 2
        return 1.0 - pairs / pairs.max()
    span = x.max() - x.min()
    if span == 0:
        return np.eye(q)
    distance = np.abs(x[:, None] - x[None, :]) / span
    if weighting == "linear":
        return 1.0 - distance
    if weighting == "quadratic":
        return 1.0 - distance ** 2
    raise ValueError(f"unknown weighting {weighting!r}; expected one of {WEIGHTINGS}")


def gwet_ac(table: npt.ArrayLike, weight_matrix: npt.ArrayLike | None = None, *,
            weighting: Weighting = "identity", confidence: float = 0.95) -> GwetResult:
    """Gwet's AC1 (identity weights) or AC2 of a count table (items × categories).

    Raises `Undefined` (a readable reason) when no item has two ratings or chance agreement is 1.
    """
    counts = np.asarray(table, dtype=float)
    counts = counts[counts.sum(axis=1) > 0]
    n, q = counts.shape if counts.ndim == 2 else (0, 0)
    w = np.eye(q) if weight_matrix is None else np.asarray(weight_matrix, dtype=float)
    r = counts.sum(axis=1)
    pairable = r >= 2
    n_pairable = int(pairable.sum())
    if n_pairable == 0:
        raise Undefined("n/a: no item has two ratings")
    if q < 2:
        raise Undefined("undefined: a single category")
    weighted = counts @ w.T  # r*_ik
    pair_count = np.where(pairable, r * (r - 1), 1.0)
    agree_i = np.where(pairable, (counts * (weighted - 1)).sum(axis=1) / pair_count, 0.0)
    observed = float(agree_i[pairable].mean())
    prevalence = (counts / r[:, None]).mean(axis=0)
    t_w = float(w.sum()) / (q * (q - 1))
    chance = t_w * float((prevalence * (1 - prevalence)).sum())
    if math.isclose(chance, 1.0):
        raise Undefined("undefined: chance agreement is 1")
    coefficient = (observed - chance) / (1 - chance)
    se, low, high = _interval(counts, r, pairable, agree_i, prevalence, t_w, observed, chance, coefficient,
                              confidence)
    return GwetResult(float(coefficient), observed, float(chance), se, low, high, n, weighting)


def _interval(counts: np.ndarray, r: np.ndarray, pairable: np.ndarray, agree_i: np.ndarray,
              prevalence: np.ndarray, t_w: float, observed: float, chance: float, coefficient: float,
              confidence: float) -> tuple[float | None, float | None, float | None]:
    """Standard error and CI by the Handbook's linearisation: each item's contribution to AC, corrected for
    its share of chance agreement, and the sample variance of those contributions over the n items."""
    n = len(counts)
    if n < 2:
        return None, None, None
    n_pairable = int(pairable.sum())
    ac_i = (n / n_pairable) * (agree_i - chance * pairable) / (1 - chance)
    chance_i = t_w * (counts @ (1 - prevalence)) / r
    linear_i = ac_i - 2 * (1 - coefficient) * (chance_i - chance) / (1 - chance)
    variance = float(((linear_i - coefficient) ** 2).sum()) / (n * (n - 1))
    se = math.sqrt(variance)
    t = float(stats.t.ppf(1 - (1 - confidence) / 2, n - 1))
    return se, max(-1.0, coefficient - t * se), min(1.0, coefficient + t * se)
