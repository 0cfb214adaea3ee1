"""Escalation's guarantee and power over 1,000 seeded calibration/test splits (issue 33, item 3; docs/escalation.md §3).

Why: the fixed-sequence test of "Trust or Escalate" (arXiv 2407.18370) started at 30 covered items keeps nothing for a
judge that errs even 2 % at the top; measures/escalation/calibration.py starts at 100. This prints, for each
synthetic judge and each start, over seeded draws of the calibration set:

- held: the share of draws where the disagreement of the kept items is ≤ α, computed exactly from the judge's
  population (Beta integrals), which the guarantee says is ≥ 1 − δ;
- realised: the share where the agreement on the kept items of a fresh 5,000-item test split is ≥ 1 − α;
- decided: the mean share of the population the judge keeps (0 when it keeps nothing), and the best possible share;
- none: the draws in which it keeps nothing.

The judges: confidence c ~ Beta(5, 1.2); "good": P(correct | c) = min(1, 0.3 + 0.68c) (wrong on 2–4 % at the top);
"never errs at the top": the same below c = 0.9, always right from 0.9; "narrow": right from c = 0.97 up (12.5 % of
the items), wrong on 35 % below; "confidently wrong at the top": 30 % wrong from c = 0.99 up, the good judge below
(its disagreement among kept items rises again at the top, outside the condition of docs/escalation.md, §3);
"easier calibration": the good judge, but the calibration items are 3 points easier than the items decided (not
exchangeable). Then a two-judge cascade (good, then never errs at the top; independent confidences).

Run: .venv/bin/python bench/bench_escalation_power.py [n_draws]   (1,000 draws: about seven minutes on one core)
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import beta as beta_distribution

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.escalation.calibration import (
    MIN_COVERED,
    START_COVERED,
    apply_cascade,
    calibrate_cascade,
    calibrate_judge,
)

A, B = 5.0, 1.2
ALPHA, DELTA = 0.1, 0.1
FINE = np.linspace(0.0, 1.0, 400_001)
DENSITY = beta_distribution.pdf(FINE, A, B)


@dataclass(frozen=True)
class Judge:
    name: str
    error: Callable[[np.ndarray], np.ndarray]  # P(wrong | c) on the items decided
    calibration_error: Callable[[np.ndarray], np.ndarray] | None = None  # on the calibration items, when different

    def risk_and_coverage(self) -> tuple[np.ndarray, np.ndarray]:
        """R(λ) = E[error | c ≥ λ] and P(c ≥ λ) on the FINE grid, by the trapezoid rule from the top."""
        weights = DENSITY * self.error(FINE)
        step = np.diff(FINE)
        tail_mass = np.concatenate([np.cumsum(((DENSITY[1:] + DENSITY[:-1]) / 2 * step)[::-1])[::-1], [0.0]])
        tail_error = np.concatenate([np.cumsum(((weights[1:] + weights[:-1]) / 2 * step)[::-1])[::-1], [0.0]])
        with np.errstate(invalid="ignore", divide="ignore"):
            risk = np.where(tail_mass > 1e-12, tail_error / tail_mass, 0.0)
        return risk, tail_mass / tail_mass[0]


def at(values: np.ndarray, threshold: float | None) -> float:
    return 0.0 if threshold is None else float(np.interp(threshold, FINE, values))


def good(c: np.ndarray) -> np.ndarray:
    return 1.0 - np.minimum(1.0, 0.3 + 0.68 * c)


JUDGES = [
    Judge("good", good),
    Judge("never errs at the top", lambda c: np.where(c >= 0.9, 0.0, good(c))),
    Judge("narrow", lambda c: np.where(c >= 0.97, 0.0, 0.35)),
    Judge("confidently wrong at the top", lambda c: np.where(c >= 0.99, 0.3, good(c))),
    Judge("good, easier calibration", good, lambda c: np.maximum(0.0, good(c) - 0.03)),
]


def draw(rng: np.random.Generator, n: int, error: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    confidence = rng.beta(A, B, size=n)
    return confidence, rng.uniform(size=n) >= error(confidence)


def one_judge(judge: Judge, n_calibration: int, start: int, n_draws: int) -> str:
    risk, coverage = judge.risk_and_coverage()
    best = float(coverage[risk <= ALPHA].max()) if (risk <= ALPHA).any() else 0.0
    held, realised, decided, n_none = 0, 0, [], 0
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        confidence, correct = draw(rng, n_calibration, judge.calibration_error or judge.error)
        fitted = calibrate_judge("judge", confidence, correct, ALPHA, DELTA, start_covered=start)
        held += at(risk, fitted.threshold) <= ALPHA
        test_confidence, test_correct = draw(rng, 5000, judge.error)
        kept = test_confidence >= (np.inf if fitted.threshold is None else fitted.threshold)
        realised += (not kept.any()) or test_correct[kept].mean() >= 1 - ALPHA
        decided.append(at(coverage, fitted.threshold))
        n_none += fitted.threshold is None
    return (f"{judge.name:30s} N={n_calibration:5d} start {start:3d}: held {held / n_draws:.3f}  realised "
            f"{realised / n_draws:.3f}  decided {np.mean(decided):.3f} (best {best:.3f})  none {n_none}")


def cascade(n_calibration: int, start: int, n_draws: int) -> str:
    """Good judge, then never errs at the top, on what the first left; the cascade's exact disagreement is the
    mixture of each judge's R at its threshold (independent confidences, errors depending on the own confidence)."""
    first, second = JUDGES[0], JUDGES[1]
    (risk1, cover1), (risk2, cover2) = first.risk_and_coverage(), second.risk_and_coverage()
    held, realised, decided = 0, 0, []
    for seed in range(n_draws):
        rng = np.random.default_rng(500_000 + seed)
        c1, ok1 = draw(rng, n_calibration + 5000, first.error)
        c2, ok2 = draw(rng, n_calibration + 5000, second.error)
        cal, test = slice(0, n_calibration), slice(n_calibration, None)
        fitted = calibrate_cascade(["good", "top"], [c1[cal], c2[cal]], [ok1[cal], ok2[cal]], ALPHA, DELTA,
                                   start_covered=start)
        t1, t2 = (judge.threshold for judge in fitted.judges)
        kept1, kept2 = at(cover1, t1), (1 - at(cover1, t1)) * at(cover2, t2)
        total = kept1 + kept2
        risk = 0.0 if total == 0 else (kept1 * at(risk1, t1) + kept2 * at(risk2, t2)) / total
        held += risk <= ALPHA
        decided.append(total)
        by = apply_cascade([t1, t2], [c1[test], c2[test]])
        right = np.where(by == 0, ok1[test], ok2[test])[by >= 0]
        realised += right.size == 0 or right.mean() >= 1 - ALPHA
    return (f"{'cascade: good, then top':30s} N={n_calibration:5d} start {start:3d}: held {held / n_draws:.3f}  "
            f"realised {realised / n_draws:.3f}  decided {np.mean(decided):.3f}")


def main() -> None:
    n_draws = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    began = time.perf_counter()
    print(f"alpha = {ALPHA}, delta = {DELTA}, {n_draws} draws each; held and realised must be >= {1 - DELTA:g}")
    good_judge, top, narrow, wrong_at_top, easier = JUDGES
    rows = [(good_judge, 1000, START_COVERED), (good_judge, 1000, MIN_COVERED), (good_judge, 400, START_COVERED),
            (good_judge, 400, MIN_COVERED), (top, 1000, START_COVERED), (top, 1000, MIN_COVERED),
            (narrow, 1000, START_COVERED), (narrow, 1000, MIN_COVERED), (narrow, 400, START_COVERED),
            (narrow, 400, MIN_COVERED), (wrong_at_top, 1000, START_COVERED), (easier, 1000, START_COVERED)]
    for judge, n_calibration, start in rows:
        print(one_judge(judge, n_calibration, start, n_draws), flush=True)
    for start in (START_COVERED, MIN_COVERED):
        print(cascade(1000, start, n_draws), flush=True)
    print(f"{time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
