"""Krippendorff's α against Krippendorff's own worked examples, and the linear-time interval
formula against the `krippendorff` package."""

import krippendorff
import numpy as np
import pytest

from measures import metrics as m

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers ×
# 12 units with missing values (rows are observers A–D there; we store items × raters).
# Published: nominal α = .743, ordinal α = .815, interval α = .849.
KRIPPENDORFF_2011_C = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]).T

# Same document, section A: two observers, binary data, 10 units. Published α = 0.095.
KRIPPENDORFF_2011_A = np.array([
    [0, 1, 0, 0, 0, 0, 0, 0, 1, 0],
    [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
], dtype=float).T


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_reproduces_krippendorff_2011_example_with_missing_values(level: str, published: float) -> None:
    assert m.krippendorff_alpha(KRIPPENDORFF_2011_C, level) == pytest.approx(published, abs=5e-4)


def test_alpha_reproduces_krippendorff_2011_binary_two_observer_example() -> None:
    assert m.krippendorff_alpha(KRIPPENDORFF_2011_A, "nominal") == pytest.approx(0.095, abs=5e-4)


def test_ordinal_alpha_is_unchanged_by_unobserved_scale_steps_in_the_value_domain() -> None:
    # Passing the whole 1..7 Likert scale as the domain must not move α (empty values add nothing).
    with_scale = m.krippendorff_alpha(KRIPPENDORFF_2011_C, "ordinal", value_domain=range(1, 8))
    assert with_scale == pytest.approx(m.krippendorff_alpha(KRIPPENDORFF_2011_C, "ordinal"), abs=1e-12)


def test_linear_interval_alpha_equals_the_krippendorff_package_on_small_random_data() -> None:
    rng = np.random.default_rng(3)
    for _ in range(25):
        data = np.round(rng.normal(2.5, 1.2, size=(int(rng.integers(3, 15)), int(rng.integers(2, 5)))), 1)
        data[rng.random(data.shape) < 0.2] = nan
        if (np.sum(~np.isnan(data), axis=1) >= 2).sum() == 0 or np.unique(data[~np.isnan(data)]).size < 2:
            continue
        expected = krippendorff.alpha(data.T, level_of_measurement="interval")
        assert m.krippendorff_alpha(data, "interval") == pytest.approx(expected, abs=1e-9)


def test_interval_alpha_stays_fast_on_many_distinct_continuous_values() -> None:
    # The package's interval path is quadratic in distinct values (its issue #38); ours is linear.
    rng = np.random.default_rng(0)
    truth = rng.uniform(0, 5, size=20_000)
    data = np.column_stack([truth + rng.normal(0, 0.5, truth.size) for _ in range(3)])
    assert m.krippendorff_alpha(data, "interval") == pytest.approx(1 - 0.25 / (0.25 + 25 / 12), abs=0.02)


def test_alpha_is_none_with_a_reason_on_degenerate_data() -> None:
    single = KRIPPENDORFF_2011_C[:, :1]
    assert m.krippendorff_alpha.explain(single) == (None, m.SINGLE_ANNOTATOR)
    identical = np.full((4, 2), 3.0)
    value, reason = m.krippendorff_alpha.explain(identical, "interval")
    assert value is None and "identical" in reason
    no_overlap = np.array([[1.0, nan], [nan, 2.0]])
    value, reason = m.krippendorff_alpha.explain(no_overlap)
    assert value is None and "two" in reason


def test_linear_nominal_alpha_equals_the_krippendorff_package_on_small_random_data() -> None:
    rng = np.random.default_rng(5)
    for _ in range(25):
        data = rng.integers(0, int(rng.integers(2, 6)), size=(int(rng.integers(3, 15)), int(rng.integers(2, 5))))
        data = data.astype(float)
        data[rng.random(data.shape) < 0.2] = nan
        if (np.sum(~np.isnan(data), axis=1) >= 2).sum() == 0 or np.unique(data[~np.isnan(data)]).size < 2:
            continue
        expected = krippendorff.alpha(data.T, level_of_measurement="nominal")
        assert m.krippendorff_alpha(data, "nominal") == pytest.approx(expected, abs=1e-9)
