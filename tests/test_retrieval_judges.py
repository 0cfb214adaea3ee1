"""Agreement between judges of a pool: pairwise Pearson/Spearman, Krippendorff's α, score distributions."""
from __future__ import annotations

import math

import pytest

from measures.retrieval.judges import correlation, distribution, interval_alpha, summary

NAN = math.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E: four observers, twelve units,
# values 1–5, missing values; the paper gives α(interval) = 0.849.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    "C": [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
}


def as_pairs(values: list[float]) -> dict[tuple[str, str], float]:
    return {("q", f"d{i}"): v for i, v in enumerate(values) if not math.isnan(v)}


def test_interval_alpha_reproduces_krippendorffs_worked_example() -> None:
    scores = {name: as_pairs(values) for name, values in KRIPPENDORFF_2011.items()}
    assert round(interval_alpha(scores), 3) == 0.849


def test_pairwise_correlation_by_hand() -> None:
    """x = 1, 2, 3 and y = 2, 4, 7: deviations (−1, 0, 1) and (−7/3, −1/3, 8/3); r = 5 / √(2 × 38/3) = 0.9934;
    the orders agree fully, so Spearman is 1."""
    result = correlation(as_pairs([1, 2, 3, 9]), as_pairs([2, 4, 7]))
    assert result["pairs"] == 3 and result["spearman"] == pytest.approx(1.0)
    assert result["pearson"] == pytest.approx(5 / math.sqrt(2 * 38 / 3))


def test_constant_or_tiny_overlaps_are_undefined_not_zero() -> None:
    assert correlation(as_pairs([5, 5, 5]), as_pairs([1, 2, 3]))["pearson"] is None
    assert correlation(as_pairs([1, 2]), as_pairs([1, 2]))["spearman"] is None
    assert interval_alpha({"a": as_pairs([3, 3]), "b": as_pairs([3, 3])}) is None


def test_distribution_and_summary() -> None:
    assert distribution(as_pairs([0, 0.5, 6.5, 7, 10])) == [2, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    result = summary({"gpt": as_pairs([1, 2, 3]), "human": as_pairs([1, 3, 2])})
    assert result["pairwise"][0]["a"] == "gpt" and result["pairwise"][0]["spearman"] == pytest.approx(0.5)
