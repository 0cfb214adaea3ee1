"""Calibrated escalation: which LLM judge labels can be trusted, with a guarantee (pure: numpy and SciPy).

After J. Jung, F. Brahman, Y. Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement", ICLR 2025, arXiv 2407.18370 (§2 selective evaluation, §3 cascaded selective evaluation), with the
fixed-sequence test of Learn then Test (A. N. Angelopoulos, S. Bates, E. J. Candès, M. I. Jordan, L. Lei,
arXiv 2110.01052, §3) started where it has the power to pass. For one judge with a confidence c(x) in [0, 1],
keep its label where c(x) ≥ λ and escalate the item to people otherwise. On human-labelled calibration items,
with the label of a judge "correct" when it agrees with the human (majority) label:

- the thresholds are `linspace(0, 1, 5000)`; n(λ) = #{c ≥ λ}, k(λ) the judge's errors among them;
- R̂⁺(λ) = the exact binomial (Clopper–Pearson) upper bound: the r solving binom.cdf(k(λ), n(λ), r) = δ,
  which is the (1 − δ) quantile of Beta(k + 1, n − k) (1 when k = n);
- fixed-sequence testing from a **pre-specified start** down: the first λ tested is the highest covering at
  least `start_covered` items (100 unless the caller sets it before looking at the labels; at most a quarter
  of the judge's answered items, never fewer than 30), then λ decreases and testing stops before the first
  λ whose bound exceeds α; the threshold is the last λ that passed; none passed, the judge covers nothing.

The paper and its authors' code start at the highest λ covering 30 items, where the bound passes at α = 0.1
only with no error at all (1 − 0.1^(1/30) = 0.074; one error gives 0.124): a judge wrong on 2–4% of its most
confident items then keeps nothing in most calibration draws although it could keep ~70% of the items.
Starting at 100 covered items, the first test sees 2–4 errors in 100 (bound ≤ 0.087 at δ = 0.1) and passes;
docs/escalation.md, §3, gives the simulation (bench/bench_escalation_power.py) and what the start costs a
judge that is reliable only on its top few per cent.

With probability at least 1 − δ over the draw of the calibration set (exchangeable with the items it is applied
to), the judge's disagreement with humans on the items it keeps is at most α, provided the disagreement among
kept items does not grow as λ rises (R(λ) non-increasing); docs/escalation.md, §3, "Why the start is
allowed", gives the argument and a simulation of a judge for which that fails. Fixed-sequence testing spends the
whole δ on every λ in turn, which is valid because the order is fixed in advance and testing stops at the first
acceptance of a null.

A cascade (the paper's §3) calibrates the judges in order: each on the calibration items that no earlier judge
covered, with the same α and δ. At use, the first judge whose confidence reaches its threshold decides; an
item no judge is confident about is escalated to people. Each judge's kept items meet the bound with probability
≥ 1 − δ; for all m judges at once a union bound gives at least 1 − m·δ, and on that event the kept items
together (a mixture of sets each with risk ≤ α) have risk ≤ α. (A later judge's items are selected by an earlier
judge's fitted threshold; docs/escalation.md, §3, says what this means in use and how the tests check it.)

A judge that covers nothing carries a `Shortfall`: the threshold that the fewest calibration labels would let pass,
what the calibration saw there, and about how many calibration items, at the disagreement seen there, would bring
its bound under α.

Confidences are floats; NaN means the judge has no answer (or no confidence) for the item, which it then never
covers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import betainc
from scipy.stats import beta

THRESHOLDS = np.linspace(0.0, 1.0, 5000)
MIN_COVERED = 30  # no λ covering fewer calibration items is ever tested
START_COVERED = 100  # the pre-specified start: the highest λ covering at least this many (module docstring)
MAX_LABELS_SEARCHED = 2 ** 24


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
class Shortfall:
    """How close a judge that covers nothing came: at `threshold` (of the λ covering at least 30 items, the one the
    fewest calibration labels would let pass; without one, the one with the smallest bound) it would keep
    `n_covered` calibration items with `n_errors` errors, R̂ `risk` and R̂⁺ `risk_bound` (> α, or ≤ α when the test
    stopped at its start above it). `n_calibration_needed`: about how many calibration items for this judge, with
    the same share kept and the same disagreement R̂, would bring that bound under α (`labels_needed`); None when no
    number would (R̂ ≥ α)."""

    threshold: float
    n_covered: int
    n_errors: int
    risk: float
    risk_bound: float
    n_calibration_needed: int | None


@dataclass(frozen=True)
class JudgeThreshold:
    """One judge's calibrated threshold, and what the calibration saw at it.

    `threshold` is None when no λ passed (the judge covers nothing). `n_calibration` counts the calibration items
    this judge was calibrated on (those no earlier judge covered), `n_covered` those with confidence ≥ threshold,
    `risk` R̂ and `risk_bound` R̂⁺ at the threshold (None without one), `n_tested` the λ tested before stopping,
    `start_covered` the coverage the first test required (0: too few answered items to test any λ), and
    `shortfall` how close it came when it covers nothing (None otherwise, or when no λ covers 30 items)."""

    judge: str
    threshold: float | None
    n_calibration: int
    n_covered: int
    risk: float | None
    risk_bound: float | None
    n_tested: int
    start_covered: int = 0
    shortfall: Shortfall | None = None


def check_levels(alpha: float, delta: float) -> None:
    """Refuse an α or δ outside (0, 1), naming it."""
    for name, value in (("alpha", alpha), ("delta", delta)):
        if not (isinstance(value, int | float) and 0.0 < value < 1.0):
            raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")


def first_test_covers(n_answered: int, start_covered: int = START_COVERED, min_covered: int = MIN_COVERED) -> int:
    """The coverage the first λ tested must reach: `start_covered`, but at most a quarter of the judge's answered
    calibration items and never fewer than `min_covered` (0 when fewer than `min_covered` items are answered:
    nothing is tested). The quarter keeps a small calibration set from spending its one test on the whole set;
    up to 123 answered items the start is the paper's, 30."""
    if n_answered < min_covered:
        return 0
    return max(min_covered, min(start_covered, n_answered // 4))


def calibrate_judge(judge: str, confidence: np.ndarray, correct: np.ndarray, alpha: float, delta: float,
                    thresholds: np.ndarray = THRESHOLDS, min_covered: int = MIN_COVERED,
                    start_covered: int = START_COVERED) -> JudgeThreshold:
    """The largest-coverage threshold whose Clopper–Pearson bound stays ≤ α under fixed-sequence testing from the
    highest λ covering `first_test_covers(...)` items down. `start_covered = min_covered` (30) is the paper's
    start, testing from the top.

    `confidence` and `correct` are one entry per calibration item (NaN confidence: never covered)."""
    check_levels(alpha, delta)
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    if confidence.shape != correct.shape:
        raise ValueError(f"{judge}: {confidence.size} confidences for {correct.size} labels")
    answered = ~np.isnan(confidence)
    thresholds = np.asarray(thresholds, dtype=float)
    n_at, k_at = _counts(confidence[answered], ~correct[answered], thresholds)
    start = first_test_covers(int(answered.sum()), start_covered, min_covered)
    if start == 0:
        return JudgeThreshold(judge, None, int(confidence.size), 0, None, None, 0)
    eligible = np.flatnonzero(n_at >= start)[::-1]  # the start first, then λ decreasing
    bounds = _bounds(n_at[eligible], k_at[eligible], delta)
    failed = np.flatnonzero(bounds > alpha)
    n_passed = int(failed[0]) if failed.size else int(eligible.size)
    n_tested = min(n_passed + 1, int(eligible.size))
    if n_passed == 0:
        shortfall = _shortfall(n_at, k_at, thresholds, start_covered, alpha, delta, min_covered)
        return JudgeThreshold(judge, None, int(confidence.size), 0, None, None, n_tested, start, shortfall)
    chosen = eligible[n_passed - 1]
    n = int(n_at[chosen])
    return JudgeThreshold(judge, float(thresholds[chosen]), int(confidence.size), n, float(k_at[chosen]) / n,
                          float(bounds[n_passed - 1]), n_tested, start)


def _counts(confidence: np.ndarray, errors: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """n(λ) = #{c ≥ λ} and k(λ), the errors among them, at every λ (confidences without NaN)."""
    order = np.argsort(-confidence, kind="stable")
    conf_desc, errors_desc = confidence[order], np.cumsum(errors[order])
    n_at = np.searchsorted(-conf_desc, -thresholds, side="right")
    k_at = np.where(n_at > 0, errors_desc[np.maximum(n_at - 1, 0)] if errors_desc.size else 0, 0)
    return n_at, k_at


def _bounds(n: np.ndarray, k: np.ndarray, delta: float) -> np.ndarray:
    """R̂⁺ at each (n, k); neighbouring λ often cover the same items, so each distinct pair is computed once."""
    if n.size == 0:
        return np.array([])
    pairs, back = np.unique(np.stack([n, k]), axis=1, return_inverse=True)
    return clopper_pearson_upper(pairs[1], pairs[0], delta)[np.ravel(back)]


def _shortfall(n_at: np.ndarray, k_at: np.ndarray, thresholds: np.ndarray, start_covered: int, alpha: float,
               delta: float, min_covered: int) -> Shortfall | None:
    """Of the λ covering at least `min_covered` items, the one that fewest calibration labels would let pass: with
    N' items it keeps the same share with the same disagreement, its bound is ≤ α and it covers at least the start
    N' items would have, so the test could reach it (ties: the highest λ). Without such a λ (R̂ ≥ α everywhere),
    the λ with the smallest bound and no number. None when no λ covers `min_covered` items."""
    candidates = np.flatnonzero(n_at >= min_covered)
    if candidates.size == 0:
        return None
    # Neighbouring λ cover the same items: one candidate per distinct n(λ), the highest λ of each.
    first_from_top = np.unique(n_at[candidates][::-1], return_index=True)[1]
    candidates = np.sort(candidates[candidates.size - 1 - first_from_top])
    n, k = n_at[candidates], k_at[candidates]
    n_answered = int(n_at[0])
    needed = labels_needed(n, k, n_answered, alpha, delta, start_covered, min_covered)
    bounds = _bounds(n, k, delta)
    if np.isfinite(needed).any():
        best = np.flatnonzero(needed == np.nanmin(needed))[-1]
    else:
        best = np.flatnonzero(bounds == bounds.min())[-1]
    chosen = int(candidates[best])
    n_needed = int(needed[best]) if np.isfinite(needed[best]) else None
    return Shortfall(float(thresholds[chosen]), int(n[best]), int(k[best]), float(k[best] / n[best]),
                     float(bounds[best]), n_needed)


def labels_needed(n_covered: np.ndarray, n_errors: np.ndarray, n_calibration: int, alpha: float, delta: float,
                  start_covered: int | None = None, min_covered: int = MIN_COVERED) -> np.ndarray:
    """Per (n, k): the smallest calibration size N' for which keeping the same share n / n_calibration of the items
    with the same disagreement rate R̂ = k / n gives a Clopper–Pearson bound ≤ α: n' = N'·share, k' = n'·R̂
    (fractional counts, through the Beta quantile) — and, with `start_covered`, n' reaches the start N' items would
    have (`first_test_covers`), so the λ is one the test could reach. NaN when R̂ ≥ α (no number of labels would
    do) or N' would pass 2^24 (about 17 million)."""
    n_covered = np.atleast_1d(np.asarray(n_covered, dtype=float))
    rate = np.atleast_1d(np.asarray(n_errors, dtype=float)) / n_covered
    share = n_covered / n_calibration

    def passes(size: np.ndarray) -> np.ndarray:
        # The (1 − δ) quantile of Beta(k + 1, n − k) is ≤ α exactly when that distribution's cdf at α is ≥ 1 − δ.
        n = size * share
        with np.errstate(invalid="ignore", divide="ignore"):
            bound_passes = betainc(n * rate + 1.0, n * (1.0 - rate), alpha) >= 1.0 - delta
        if start_covered is None:
            return bound_passes
        start = np.maximum(min_covered, np.minimum(start_covered, size // 4))
        return bound_passes & (n >= start)

    low, high = np.zeros(rate.shape), np.full(rate.shape, float(MAX_LABELS_SEARCHED))
    possible = (rate < alpha) & passes(high)
    for _ in range(int(np.log2(MAX_LABELS_SEARCHED)) + 1):  # bisection: passes(high) holds, passes(low) does not
        middle = np.floor((low + high) / 2)
        moving = high - low > 1
        ok = passes(middle)
        high = np.where(moving & ok, middle, high)
        low = np.where(moving & ~ok, middle, low)
    return np.where(possible, high, np.nan)


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
                      alpha: float, delta: float, min_covered: int = MIN_COVERED,
                      start_covered: int = START_COVERED) -> Cascade:
    """Calibrate each judge in order on the calibration items no earlier judge covered (arXiv 2407.18370 §3)."""
    check_levels(alpha, delta)
    n_items = len(corrects[0]) if corrects else 0
    decided_by = np.full(n_items, -1)
    results = []
    for index, (judge, confidence, correct) in enumerate(zip(judges, confidences, corrects, strict=True)):
        remaining = decided_by == -1
        confidence = np.asarray(confidence, dtype=float)
        fitted = calibrate_judge(judge, confidence[remaining], np.asarray(correct, bool)[remaining], alpha, delta,
                                 min_covered=min_covered, start_covered=start_covered)
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
