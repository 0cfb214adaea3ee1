"""Calibrated escalation: which LLM judge labels can be trusted, with a guarantee (pure: numpy and SciPy).

After J. Jung, F. Brahman, Y. Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement", ICLR 2025, arXiv 2407.18370 (§2 selective evaluation, §3 cascaded selective evaluation). For one
judge with a confidence c(x) in [0, 1], keep its label where c(x) ≥ λ and escalate the item to people otherwise.
On human-labelled calibration items, with the label of a judge "correct" when it agrees with the human
(majority) label:

- the thresholds tried are `linspace(0, 1, 5000)`, kept where n(λ) = #{c ≥ λ} ≥ 30;
- R̂(λ) = the share of the covered items whose judge label disagrees with the human label;
- R̂⁺(λ) = the exact binomial (Clopper–Pearson) upper bound: the r solving binom.cdf(n(λ)·R̂(λ), n(λ), r) = δ,
  which is the (1 − δ) quantile of Beta(k + 1, n − k) for k = n(λ)·R̂(λ) errors (1 when k = n);
- fixed-sequence testing from the highest λ down, stopping before the first λ whose bound exceeds α: the
  threshold is the last λ that passed; none passed, the judge covers nothing.

Then with probability at least 1 − δ over the draw of the calibration set (exchangeable with the items it is
applied to), the judge's disagreement with humans on the items it keeps is at most α. Fixed-sequence testing
spends the whole δ on every λ in turn, which is valid because the tests are ordered in advance and testing stops
at the first acceptance of a null (the paper's §2, "fixed sequence testing").

A cascade (the paper's §3) calibrates the judges in order: each on the calibration items that no earlier judge
covered, with the same α and δ. At use, the first judge whose confidence reaches its threshold decides; an
item no judge is confident about is escalated to people. Each judge's kept items meet the bound with probability
≥ 1 − δ; for all m judges at once a union bound gives at least 1 − m·δ, and on that event the kept items
together (a mixture of sets each with risk ≤ α) have risk ≤ α. (A later judge's items are selected by an earlier
judge's fitted threshold; docs/escalation.md, §3, says what this means in use and how the tests check it.)

Confidences are floats; NaN means the judge has no answer (or no confidence) for the item, which it then never
covers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import beta

THRESHOLDS = np.linspace(0.0, 1.0, 5000)
MIN_COVERED = 30


def clopper_pearson_upper(n_errors: int | np.ndarray, n: int | np.ndarray, delta: float) -> np.ndarray:
    """The exact binomial upper bound on the error rate: the r with binom.cdf(n_errors, n, r) = δ.

    binom.cdf(k, n, r) = 1 − I_r(k + 1, n − k) (the regularised incomplete beta function), so the root is the
    (1 − δ) quantile of Beta(k + 1, n − k); with k = n no r < 1 solves it and the bound is 1."""
    n_errors = np.asarray(n_errors, dtype=float)
    n = np.asarray(n, dtype=float)
    all_wrong = n_errors >= n
    safe_b = np.where(all_wrong, 1.0, n - n_errors)
    bound = beta.ppf(1.0 - delta, n_errors + 1.0, safe_b)
    return np.where(all_wrong, 1.0, bound)


@dataclass(frozen=True)
class JudgeThreshold:
    """One judge's calibrated threshold, and what the calibration saw at it.

    `threshold` is None when no λ passed (the judge covers nothing). `n_calibration` counts the calibration items
    this judge was calibrated on (those no earlier judge covered), `n_covered` those with confidence ≥ threshold,
    `risk` R̂ and `risk_bound` R̂⁺ at the threshold (None without one), `n_tested` the λ tested before stopping."""

    judge: str
    threshold: float | None
    n_calibration: int
    n_covered: int
    risk: float | None
    risk_bound: float | None
    n_tested: int


def check_levels(alpha: float, delta: float) -> None:
    """Refuse an α or δ outside (0, 1), naming it."""
    for name, value in (("alpha", alpha), ("delta", delta)):
        if not (isinstance(value, int | float) and 0.0 < value < 1.0):
            raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")


def calibrate_judge(judge: str, confidence: np.ndarray, correct: np.ndarray, alpha: float, delta: float,
                    thresholds: np.ndarray = THRESHOLDS, min_covered: int = MIN_COVERED) -> JudgeThreshold:
    """The largest-coverage threshold whose Clopper–Pearson bound stays ≤ α under fixed-sequence testing.

    `confidence` and `correct` are one entry per calibration item (NaN confidence: never covered)."""
    check_levels(alpha, delta)
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    if confidence.shape != correct.shape:
        raise ValueError(f"{judge}: {confidence.size} confidences for {correct.size} labels")
    answered = ~np.isnan(confidence)
    conf, errors = confidence[answered], ~correct[answered]
    order = np.argsort(-conf, kind="stable")
    conf_desc, errors_desc = conf[order], np.cumsum(errors[order])
    # n(λ) = #{c ≥ λ}: the count of descending confidences ≥ λ; k(λ) the errors among them.
    n_at = np.searchsorted(-conf_desc, -np.asarray(thresholds), side="right")
    k_at = np.where(n_at > 0, errors_desc[np.maximum(n_at - 1, 0)] if errors_desc.size else 0, 0)
    eligible = np.flatnonzero(n_at >= min_covered)[::-1]  # highest λ first
    # Neighbouring λ often cover the same items: the bound is computed once per distinct n(λ).
    distinct_n, first_of, back = np.unique(n_at[eligible], return_index=True, return_inverse=True)
    bounds = clopper_pearson_upper(k_at[eligible][first_of], distinct_n, delta)[back] if eligible.size else np.array([])
    failed = np.flatnonzero(bounds > alpha)
    n_passed = int(failed[0]) if failed.size else int(eligible.size)
    n_tested = min(n_passed + 1, int(eligible.size))
    if n_passed == 0:
        return JudgeThreshold(judge, None, int(confidence.size), 0, None, None, n_tested)
    chosen = eligible[n_passed - 1]
    n = int(n_at[chosen])
    return JudgeThreshold(judge, float(thresholds[chosen]), int(confidence.size), n, float(k_at[chosen]) / n,
                          float(bounds[n_passed - 1]), n_tested)


@dataclass(frozen=True)
class Cascade:
    """The judges' thresholds in cascade order, and how the calibration items were decided."""

    alpha: float
    delta: float
    judges: tuple[JudgeThreshold, ...]
    decided_by: np.ndarray = field(repr=False)  # per calibration item: the judge's index, or -1 (escalated)


def covers(threshold: float | None, confidence: np.ndarray) -> np.ndarray:
    """Where a judge with this threshold keeps its label (never where confidence is NaN or it has none)."""
    confidence = np.asarray(confidence, dtype=float)
    if threshold is None:
        return np.zeros(confidence.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return ~np.isnan(confidence) & (confidence >= threshold)


def calibrate_cascade(judges: Sequence[str], confidences: Sequence[np.ndarray], corrects: Sequence[np.ndarray],
                      alpha: float, delta: float, min_covered: int = MIN_COVERED) -> Cascade:
    """Calibrate each judge in order on the calibration items no earlier judge covered (arXiv 2407.18370 §3)."""
    check_levels(alpha, delta)
    n_items = len(corrects[0]) if corrects else 0
    decided_by = np.full(n_items, -1)
    results = []
    for index, (judge, confidence, correct) in enumerate(zip(judges, confidences, corrects, strict=True)):
        remaining = decided_by == -1
        confidence = np.asarray(confidence, dtype=float)
        fitted = calibrate_judge(judge, confidence[remaining], np.asarray(correct, bool)[remaining], alpha, delta,
                                 min_covered=min_covered)
        results.append(fitted)
        decided_by[remaining & covers(fitted.threshold, confidence)] = index
    return Cascade(alpha, delta, tuple(results), decided_by)


def apply_cascade(thresholds: Sequence[float | None], confidences: Sequence[np.ndarray]) -> np.ndarray:
    """Per item, the index of the first judge whose confidence reaches its threshold, or -1 (escalate)."""
    n_items = len(confidences[0]) if confidences else 0
    decided_by = np.full(n_items, -1)
    for index, (threshold, confidence) in enumerate(zip(thresholds, confidences, strict=True)):
        decided_by[(decided_by == -1) & covers(threshold, confidence)] = index
    return decided_by
