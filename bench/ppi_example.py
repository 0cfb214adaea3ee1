"""The worked example of docs/ppi.md: a 1–7 rating study of 2,000 items, a judge that rates 0.8 too high on
every item, people on a uniform sample of 100. Prints the PPI++ estimate beside the humans' alone, what the
labels are worth, the plan for ±0.08, the confidence sequence, and how often each interval covers the mean of
all 2,000 human ratings over 1,000 seeded draws (the pure code of agreement/ppi/, no database). Then active
sampling on 3,000 items whose judge noise grows with difficulty: 50 uniform + 100 active draws against 150
uniform ones, and ppi-python's weighted form on the same active draws.

Run: .venv/bin/python bench/ppi_example.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.ppi.active import draw_probabilities, pooled_draws
from measures.ppi.estimates import Sample, active_estimate, estimate
from measures.ppi.planner import labels_needed
from measures.ppi.sequence import confidence_sequence


def main() -> None:
    rng = np.random.default_rng(24)
    size, n = 2000, 100
    truth = np.clip(np.round(rng.normal(4.0, 1.4, size)), 1, 7)
    judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, size)), 1, 7)
    print(f"mean of all {size} human ratings: {truth.mean():.4f}; the judge's mean: {judge.mean():.4f}")
    order = rng.permutation(size)
    labelled, unlabelled = order[:n], order[n:]
    result = estimate(Sample(truth[labelled], judge[labelled], judge[unlabelled]), alpha=0.05)
    print(f"n = {result.n}, N = {result.n_unlabelled}, judge's mean error on the labelled "
          f"{result.judge_mean_error:+.3f}, rho = {result.rho:.3f}, lambda = {result.lam:.3f}")
    print(f"PPI++:     {result.estimate:.4f} [{result.ci_low:.4f}, {result.ci_high:.4f}]  ±{result.half_width:.4f}")
    print(f"classical: {result.classical_estimate:.4f} [{result.classical_low:.4f}, {result.classical_high:.4f}]  "
          f"±{result.classical_half_width:.4f}")
    print(f"the judge alone: {judge.mean():.4f} (no interval: its bias is unknown without people)")
    print(f"your {result.n} labels are worth {result.n_effective:.0f}")
    plan = labels_needed(Sample(truth[labelled], judge[labelled], judge[unlabelled]), 0.08)
    print(f"plan for ±0.08: {plan.n_more} more labels (projected ±{plan.half_width_planned:.4f}, "
          f"with the 95% assurance margin)")
    more = order[: n + plan.n_more]
    rest = order[n + plan.n_more:]
    after = estimate(Sample(truth[more], judge[more], judge[rest]))
    print(f"after labelling them: n = {after.n}, ±{after.half_width:.4f}")
    sequence = confidence_sequence(truth[more], judge[more], judge, (1, 7))
    print(f"confidence sequence at n = {sequence.t[-1]}: [{sequence.low[-1]:.4f}, {sequence.high[-1]:.4f}] "
          f"±{sequence.half_width()[-1]:.4f}; within ±0.08 from n = {sequence.first_within(0.08)}")
    covered_ppi = covered_classical = 0
    widths = np.zeros((1000, 2))
    for draw in range(1000):
        pick = rng.permutation(size)
        r = estimate(Sample(truth[pick[:n]], judge[pick[:n]], judge[pick[n:]]))
        covered_ppi += r.ci_low <= truth.mean() <= r.ci_high
        covered_classical += r.classical_low <= truth.mean() <= r.classical_high
        widths[draw] = r.half_width, r.classical_half_width
    print(f"1,000 draws of {n}: PPI++ covers {covered_ppi / 10:.1f}%, mean ±{widths[:, 0].mean():.4f}; classical "
          f"covers {covered_classical / 10:.1f}%, mean ±{widths[:, 1].mean():.4f}")


def active() -> None:
    rng = np.random.default_rng(1)
    size = 3000
    spread = 0.1 + 3 * rng.random(size) ** 3  # what several judges' disagreement would show
    truth = np.clip(np.round(rng.normal(4, 1.4, size)), 1, 7)
    judge = truth + 0.8 + rng.normal(0, 1, size) * spread
    q = draw_probabilities(spread)
    results = {"active (50 uniform + 100 active)": [], "uniform (150)": [], "ppi-python w on the active draws": []}
    for _ in range(1000):
        rows, w = pooled_draws(size, rng.permutation(size)[:50], [(q, rng.choice(size, 100, p=q))])
        results["active (50 uniform + 100 active)"].append(active_estimate(truth[rows], judge[rows], w,
                                                                           judge.mean(), size))
        results["ppi-python w on the active draws"].append(estimate(Sample(truth[rows], judge[rows], judge, w=w)))
        same = rng.choice(size, 150)
        results["uniform (150)"].append(active_estimate(truth[same], judge[same], np.ones(150), judge.mean(), size))
    for name, runs in results.items():
        covered = np.mean([r.ci_low <= truth.mean() <= r.ci_high for r in runs])
        print(f"{name}: covers {100 * covered:.1f}%, mean ±{np.mean([r.half_width for r in runs]):.4f}")


if __name__ == "__main__":
    main()
    active()
