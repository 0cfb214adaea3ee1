"""The anytime-valid confidence sequence (agreement/ppi/sequence.py): it covers the full-data human mean at
every look at once in ≥ 95% of 1,000 seeded draws, where peeking at the fixed-n interval after every label
does not; its boundary and λ by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from agreement.ppi.estimates import Sample, power_tuned_lambda, z_value
from agreement.ppi.sequence import confidence_sequence, mixture_rho, predictable_lambdas


def biased_population(seed: int, size: int = 3000) -> tuple[np.random.Generator, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(4, 1.4, size)), 1, 7)
    judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, size)), 1, 7)  # 0.8 too high, noisy
    return rng, truth, judge


def test_the_sequence_covers_at_every_look_in_at_least_95_percent_of_1000_draws() -> None:
    rng, truth, judge = biased_population(7)
    target, n, draws = truth.mean(), 300, 1000
    covered_always = peeking_covered_always = 0
    z = z_value(0.05)
    for _ in range(draws):
        order = rng.permutation(len(truth))[:n]
        sequence = confidence_sequence(truth[order], judge[order], judge, t_star=n)
        covered_always += bool(np.all((sequence.low <= target) & (target <= sequence.high)))
        # the fixed-n normal interval around the same running estimate, looked at after every label
        radius = z * (sequence.high - sequence.low) / 2 / _boundary_factor(sequence.t, 0.05, n)
        peeking_covered_always += bool(np.all(np.abs(sequence.estimate - target) <= radius))
    assert covered_always / draws >= 0.95
    assert peeking_covered_always / draws < 0.90  # looking after every label inflates the error of a fixed-n CI


def _boundary_factor(t: np.ndarray, alpha: float, t_star: int) -> np.ndarray:
    """√t × the mixture boundary's width per unit σ̂ (the factor the sequence multiplies σ̂ by, times √t)."""
    rho2 = mixture_rho(alpha, t_star) ** 2
    return np.sqrt(t) * np.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))


def test_the_boundary_by_hand_at_t_star() -> None:
    # α = 0.05, t* = 100: ρ² = (−2 ln 0.05 + ln(−2 ln 0.05 + 1))/100 = (5.99146 + ln 6.99146)/100 = 0.0793626
    assert mixture_rho(0.05, 100) ** 2 == pytest.approx((5.991464547 + math.log(6.991464547)) / 100, rel=1e-9)
    y = np.array([1.0, 2, 3, 4] * 25)
    # a judge answering 3 everywhere carries nothing: λ = 0, so ψ_i = y_i, mean 2.5, σ̂ = √1.25
    sequence = confidence_sequence(y, np.full(100, 3.0), np.full(400, 3.0), alpha=0.05, t_star=100, min_labels=100)
    rho2 = mixture_rho(0.05, 100) ** 2
    radius = math.sqrt(1.25) * math.sqrt(2 * (100 * rho2 + 1) / (100**2 * rho2)
                                         * math.log(math.sqrt(100 * rho2 + 1) / 0.05))
    assert sequence.t.tolist() == [100]
    assert sequence.estimate[0] == pytest.approx(2.5)
    assert sequence.high[0] - sequence.estimate[0] == pytest.approx(radius, rel=1e-12)


def test_each_label_uses_the_lambda_tuned_on_the_labels_before_it() -> None:
    _rng, truth, judge = biased_population(3, size=500)
    lam = predictable_lambdas(truth[:60], judge[:60], float(np.var(judge, ddof=1)), 500)
    assert lam[:3].tolist() == [0.0, 0.0, 0.0]
    # λ for the 41st label: PPI++'s λ on the first 40 (the unlabelled being the other 460 items)
    expected = power_tuned_lambda(Sample(truth[:40], judge[:40], judge[40:]))
    assert lam[40] == pytest.approx(expected, rel=1e-9)


def test_too_few_labels_for_a_sequence_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 20 labels"):
        confidence_sequence(np.ones(5), np.ones(5), np.ones(50))
    with pytest.raises(ValueError, match="t\\* must be at least 1"):
        confidence_sequence(np.ones(30), np.ones(30), np.ones(50), t_star=0)


def test_a_sequence_tuned_for_a_fixed_t_star_covers_at_every_look_too() -> None:
    """The default t* = 200 fixed before the first look, labels arriving up to 400: ≥ 95% of 1,000 draws."""
    rng, truth, judge = biased_population(8)
    covered = 0
    for _ in range(1000):
        order = rng.permutation(len(truth))[:400]
        sequence = confidence_sequence(truth[order], judge[order], judge)
        covered += bool(np.all((sequence.low <= truth.mean()) & (truth.mean() <= sequence.high)))
    assert covered / 1000 >= 0.95
