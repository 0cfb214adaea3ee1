"""The confidence sequence's guarantee, simulated (docs/ppi.md, "Stopping"): coverage of the pool's human mean at
every look from 20 to 300 labels over 500 seeded streams, for shares p = 0.02, 0.05, 0.10, 0.30 and for STS
similarities on 0–5, the betting sequence of measures/ppi/sequence.py beside the Gaussian-mixture sequence it
replaced (reproduced below as it was), with the width each costs at 20, 50, 100, 200 and 300 labels, the looks
of zero width, and how often ±0.03 (±0.15 for STS) was "reached" at the first look. Then where the guarantee
does not hold: the same labels arriving sorted by value instead of in a random order.

Run: .venv/bin/python bench/ppi_sequence_coverage.py [--streams 500]  (about a minute of one core)
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.ppi.sequence import confidence_sequence, predictable_lambdas

POOL, LABELS = 2000, 300
LOOKS_SHOWN = (20, 50, 100, 200, 300)


def gaussian_mixture_sequence(y: np.ndarray, yhat: np.ndarray, judge_all: np.ndarray, alpha: float = 0.05,
                              t_star: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) at t = 20..n of the sequence before issue 33: the running mean of
    ψ_i = λ_{i−1}·μ_f + y_i − λ_{i−1}·ŷ_i ± σ̂_t·√(2(tρ² + 1)/(t²ρ²)·log(√(tρ² + 1)/α)), the two-sided
    normal-mixture boundary of arXiv:2103.06476 with σ̂ the standard deviation of the ψ so far."""
    lam = predictable_lambdas(y, yhat, float(np.var(judge_all, ddof=1)), len(judge_all))
    psi = lam * judge_all.mean() + (y - lam * yhat)
    t = np.arange(1, len(y) + 1, dtype=float)
    mean = np.cumsum(psi) / t
    variance = np.maximum(np.cumsum(psi**2) / t - mean**2, 0)
    log_term = -2 * math.log(alpha)
    rho2 = (log_term + math.log(log_term + 1)) / t_star
    radius = np.sqrt(variance) * np.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))
    return (mean - radius)[19:], (mean + radius)[19:]


def share_population(rng: np.random.Generator, share: float) -> tuple[np.ndarray, np.ndarray]:
    """0/1 labels with the given share; a judge that finds 75% of them and says yes to 4% of the others."""
    truth = (rng.random(POOL) < share).astype(float)
    judge = np.where(truth == 1, rng.random(POOL) < 0.75, rng.random(POOL) < 0.04).astype(float)
    return truth, judge


def sts_population(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Similarities on 0–5 in steps of 0.5; a judge 0.6 too high with noise."""
    truth = np.clip(np.round(rng.normal(2.6, 1.3, POOL) * 2) / 2, 0, 5)
    judge = np.clip(np.round((truth + 0.6 + rng.normal(0, 0.8, POOL)) * 2) / 2, 0, 5)
    return truth, judge


def simulate(name: str, truth: np.ndarray, judge: np.ndarray, bounds: tuple[float, float], target: float,
             rng: np.random.Generator, streams: int, sorted_order: bool = False) -> None:
    mean = truth.mean()
    shown = [t - 20 for t in LOOKS_SHOWN]
    results = {"betting": [0, 0, 0, []], "mixture": [0, 0, 0, []]}  # covered, zero-width looks, early stop, ±
    for _ in range(streams):
        order = rng.permutation(POOL)[:LABELS]
        if sorted_order:
            order = order[np.argsort(truth[order], kind="stable")]
        y, yhat = truth[order], judge[order]
        sequence = confidence_sequence(y, yhat, judge, bounds)
        for key, (low, high) in (("betting", (sequence.low, sequence.high)),
                                 ("mixture", gaussian_mixture_sequence(y, yhat, judge))):
            tally = results[key]
            tally[0] += bool(np.all((low <= mean) & (mean <= high)))
            tally[1] += int(np.sum(high <= low))
            tally[2] += bool((high[0] - low[0]) / 2 <= target)
            tally[3].append((high - low) / 2)
    for key, (covered, zero, early, widths) in results.items():
        half = np.mean(widths, axis=0)
        print(f"{name:<22} {key:<8} mean {mean:.3f}  covers at every look {covered / streams:.3f}  "
              f"zero-width looks {zero:>5}  ±{target:g} at 20 labels {early:>4}  mean ± at "
              + ", ".join(f"{t}: {half[k]:.3f}" for t, k in zip(LOOKS_SHOWN, shown, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=500)
    streams = parser.parse_args().streams
    started = time.process_time()
    print(f"{streams} streams of {LABELS} labels from a pool of {POOL}, 95% sequences, looks at every label "
          "from 20; mean ± at the labels shown")
    for share in (0.02, 0.05, 0.10, 0.30):
        rng = np.random.default_rng(int(share * 1000))
        truth, judge = share_population(rng, share)
        simulate(f"share p = {share:.2f}", truth, judge, (0.0, 1.0), 0.03, rng, streams)
    rng = np.random.default_rng(5)
    truth, judge = sts_population(rng)
    simulate("STS 0-5", truth, judge, (0.0, 5.0), 0.15, rng, streams)
    print("where it does not hold: the same labels arriving sorted by value, not in a random order")
    rng = np.random.default_rng(100)
    truth, judge = share_population(rng, 0.10)
    simulate("share p = 0.10 sorted", truth, judge, (0.0, 1.0), 0.03, rng, streams // 5, sorted_order=True)
    rng = np.random.default_rng(5)
    truth, judge = sts_population(rng)
    simulate("STS 0-5 sorted", truth, judge, (0.0, 5.0), 0.15, rng, streams // 5, sorted_order=True)
    print(f"{time.process_time() - started:.0f} s of CPU")


if __name__ == "__main__":
    main()
