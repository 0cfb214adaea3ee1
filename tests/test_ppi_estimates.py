"""PPI++ estimates and intervals (measures/ppi/estimates.py) against ppi-python 0.2.3 on this file's own data,
the effective-n formula by hand, and a seeded coverage simulation with a deliberately biased judge."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from ppi_py.ppi import _calc_lam_glm

from measures.ppi.estimates import Sample, difference, effective_n, estimate, power_tuned_lambda

REPO = Path(__file__).resolve().parent.parent
TOL = 1e-9


def ratings(seed: int, n: int, big_n: int, *, bias: float, noise: float) -> Sample:
    """Human ratings on 1–7 and a judge that rates `bias` higher with `noise`, n labelled, N unlabelled."""
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(4.2, 1.3, n + big_n)), 1, 7)
    judge = np.clip(np.round(truth + bias + rng.normal(0, noise, n + big_n)), 1, 7)
    return Sample(truth[:n], judge[:n], judge[n:])


def ppi_py_values(sample: Sample, **weights: np.ndarray) -> tuple[float, float, float, float, float]:
    """(estimate, ci low, ci high, classical low, classical high) from ppi-python itself, α = 0.05."""
    point = ppi_mean_pointestimate(sample.y, sample.yhat, sample.yhat_unlabelled, **weights)
    low, high = ppi_mean_ci(sample.y, sample.yhat, sample.yhat_unlabelled, alpha=0.05, **weights)
    c_low, c_high = classical_mean_ci(sample.y, w=weights.get("w"), alpha=0.05)
    return (float(np.ravel(point)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0]), float(c_low),
            float(c_high))


def assert_matches_ppi_py(sample: Sample, **weights: np.ndarray) -> None:
    ours = estimate(sample, alpha=0.05)
    assert (ours.estimate, ours.ci_low, ours.ci_high, ours.classical_low, ours.classical_high) == pytest.approx(
        ppi_py_values(sample, **weights), abs=TOL, rel=0)


@pytest.mark.parametrize(("seed", "noise"), [(1, 0.6), (2, 1.5), (3, 3.0)])
def test_estimate_and_interval_match_ppi_python_with_the_power_tuned_lambda(seed: int, noise: float) -> None:
    sample = ratings(seed, 60, 900, bias=0.7, noise=noise)
    assert_matches_ppi_py(sample)
    lam = estimate(sample).lam
    assert lam is not None and 0 < lam < 1  # λ tuned strictly inside [0, 1]: the clip plays no part here


def test_lambda_is_ppi_pythons_calc_lam_glm_around_the_lambda_one_estimate() -> None:
    s = ratings(4, 80, 500, bias=-0.5, noise=1.2)
    theta_one = s.yhat_unlabelled.mean() + (s.y - s.yhat).mean()
    expected = _calc_lam_glm((s.y - theta_one)[:, None], (s.yhat - theta_one)[:, None],
                             (s.yhat_unlabelled - theta_one)[:, None], np.eye(1), clip=True)
    assert power_tuned_lambda(s) == pytest.approx(float(expected), abs=TOL)


def test_a_judge_better_than_needed_is_clipped_to_lambda_one_as_ppi_python_does() -> None:
    rng = np.random.default_rng(5)
    y = rng.normal(3, 1, 30)
    # a judge that compresses the scale by half: λ = Cov/((1 + n/N)·Var(yhat)) ≈ 0.5/(0.25·1.075) ≈ 1.9, clipped
    sample = Sample(y, 0.5 * y + 1, 0.5 * rng.normal(3, 1, 400) + 1)
    assert estimate(sample).lam == 1.0
    assert_matches_ppi_py(sample)


def test_weighted_estimates_match_ppi_python_with_w_and_w_unlabeled() -> None:
    sample = ratings(6, 70, 600, bias=0.4, noise=1.0)
    rng = np.random.default_rng(7)
    w, w_unlabelled = rng.uniform(0.5, 3.0, 70), rng.uniform(0.5, 2.0, 600)
    weighted = Sample(sample.y, sample.yhat, sample.yhat_unlabelled, w=w, w_unlabelled=w_unlabelled)
    assert_matches_ppi_py(weighted, w=w, w_unlabeled=w_unlabelled)
    only_labelled = Sample(sample.y, sample.yhat, sample.yhat_unlabelled, w=w)
    assert_matches_ppi_py(only_labelled, w=w)
    # weights are normalised to sum to n, as ppi-python's: scaling them all changes nothing
    assert estimate(Sample(sample.y, sample.yhat, sample.yhat_unlabelled, w=10 * w)).estimate == pytest.approx(
        estimate(only_labelled).estimate, abs=TOL)


def test_shares_of_a_label_match_ppi_python() -> None:
    rng = np.random.default_rng(8)
    truth = (rng.random(1200) < 0.3).astype(float)
    judge = np.where(rng.random(1200) < 0.8, truth, 1 - truth)  # flips a fifth of the answers
    assert_matches_ppi_py(Sample(truth[:150], judge[:150], judge[150:]))


def test_effective_n_by_hand() -> None:
    # n = 40, N = 360, ρ = 0.8: 40·400 / (40 + 0.36·360) = 16000 / 169.6 = 94.3396…
    assert effective_n(40, 360, 0.8) == pytest.approx(16000 / 169.6, abs=TOL)
    assert effective_n(40, 360, 0.0) == pytest.approx(40.0)  # a useless judge adds nothing
    assert effective_n(40, 360, 1.0) == pytest.approx(400.0)  # a perfect one is worth every item
    sample = ratings(9, 50, 450, bias=0.3, noise=0.8)
    result = estimate(sample)
    rho = float(np.corrcoef(sample.y, sample.yhat)[0, 1])
    assert result.rho == pytest.approx(rho)
    assert result.n_effective == pytest.approx(50 * 500 / (50 + (1 - rho**2) * 450))


def test_judge_mean_error_is_the_mean_of_judge_minus_human_on_the_labelled_items() -> None:
    sample = Sample(np.array([1.0, 2, 3, 4]), np.array([2.0, 2, 4, 6]), np.array([3.0, 5, 1]))
    assert estimate(sample).judge_mean_error == pytest.approx((1 + 0 + 1 + 2) / 4)


def test_difference_of_two_systems_subtracts_estimates_and_adds_variances() -> None:
    a, b = ratings(10, 60, 500, bias=0.5, noise=1.0), ratings(11, 50, 400, bias=0.9, noise=1.3)
    result = difference("a", estimate(a), "b", estimate(b))
    pa, pb = ppi_py_values(a), ppi_py_values(b)
    half_a, half_b = (pa[2] - pa[1]) / 2, (pb[2] - pb[1]) / 2
    assert result.estimate == pytest.approx(pa[0] - pb[0], abs=TOL)
    half = np.hypot(half_a, half_b)  # independent samples: the half-widths add in quadrature (same z)
    assert (result.ci_low, result.ci_high) == pytest.approx((pa[0] - pb[0] - half, pa[0] - pb[0] + half), abs=TOL)
    classical = (np.mean(a.y) - np.mean(b.y))
    assert result.classical_estimate == pytest.approx(classical, abs=TOL)


def test_degenerate_samples_are_answered_with_a_reason() -> None:
    one = estimate(Sample(np.array([3.0]), np.array([4.0]), np.array([1.0, 2.0])))
    assert one.estimate is None and "1 labelled item" in one.reason
    constant_judge = estimate(Sample(np.array([1.0, 2, 3]), np.array([4.0, 4, 4]), np.array([4.0, 4])))
    assert constant_judge.lam == 0.0 and constant_judge.estimate == pytest.approx(2.0)
    assert "ρ undefined" in constant_judge.reason
    all_labelled = estimate(Sample(np.array([1.0, 2, 3]), np.array([1.0, 3, 3]), np.array([])))
    assert all_labelled.estimate == pytest.approx(2.0) and "every item is labelled" in all_labelled.reason
    with pytest.raises(ValueError, match="pair up"):
        estimate(Sample(np.array([1.0, 2]), np.array([1.0]), np.array([1.0])))
    with pytest.raises(ValueError, match="alpha"):
        estimate(ratings(1, 10, 10, bias=0, noise=1), alpha=1.5)


def test_coverage_of_the_full_data_human_mean_with_a_biased_judge_over_1000_seeded_draws() -> None:
    """A judge that rates 0.8 too high and is noisy: over 1,000 uniform draws of 100 labelled items from 3,000,
    the 95% PPI++ interval covers the mean of all 3,000 human values in ≥ 93% of draws, and is narrower than
    the humans' alone on average."""
    rng = np.random.default_rng(2024)
    population, n = 3000, 100
    truth = np.clip(np.round(rng.normal(4.0, 1.4, population)), 1, 7)
    judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, population)), 1, 7)
    target = truth.mean()
    covered = ppi_width = classical_width = 0.0
    draws = 1000
    for _ in range(draws):
        order = rng.permutation(population)
        labelled, unlabelled = order[:n], order[n:]
        result = estimate(Sample(truth[labelled], judge[labelled], judge[unlabelled]))
        covered += result.ci_low <= target <= result.ci_high
        ppi_width += result.ci_high - result.ci_low
        classical_width += result.classical_high - result.classical_low
    assert covered / draws >= 0.93
    assert ppi_width / draws < 0.8 * classical_width / draws  # the judge is worth it here: over 20% narrower


def test_the_maths_modules_import_no_django() -> None:
    code = ("import sys; import measures.ppi.estimates, agreement.ppi.estimands, measures.ppi.task_estimates, "
            "measures.ppi.planner; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
