"""Confidence intervals: Wilson (Newcombe 1998), Fisher z (hand-worked and HUME Table 8),
annotator range, seeded bootstrap."""

import math

import pytest

from measures import metrics as m


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_reproduces_newcombe_1998_table_i(successes: int, n: int, low: float, high: float) -> None:
    # Newcombe (1998), Statistics in Medicine 17:857–872, Table I, method 3 (score, no correction);
    # published to 4 decimals.
    assert m.wilson_interval(successes, n) == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(
    ("successes", "n", "published"),
    [
        (22, 48, (32.6, 59.7)),  # EmotionClassification eng: 45.8 [32.6, 59.7]
        (38, 40, (83.5, 98.6)),  # MultilingualSentiment ara: 95.0
        (31, 40, (62.5, 87.7)),  # MultilingualSentiment eng: 77.5
        (33, 45, (59.0, 84.0)),  # ToxicConversations eng: 73.3
        (38, 45, (71.2, 92.3)),  # TweetSentimentExtraction eng: 84.4
    ],
)
def test_wilson_reproduces_hume_table_8_classification_cis(successes: int, n: int, published: tuple) -> None:
    # HUME (El Assadi et al.), Appendix E, Table 8, printed ×100 to one decimal.
    low, high = m.wilson_interval(successes, n)
    assert (100 * low, 100 * high) == pytest.approx(published, abs=0.05)


def test_wilson_is_undefined_without_items() -> None:
    assert m.wilson_interval.explain(0, 0) == (None, "undefined: no scored items")


def test_fisher_z_interval_worked_by_hand() -> None:
    # r = 0.5, n = 28: z = artanh(0.5) = 0.549306; SE = 1/√(28−3) = 0.2; z ± 1.959964·0.2
    # = [0.157313, 0.941299] → tanh → [0.156028, 0.735818]
    low, high = m.fisher_z_interval(0.5, 28)
    assert low == pytest.approx(math.tanh(0.549306 - 0.391993), abs=1e-6)
    assert (low, high) == pytest.approx((0.156028, 0.735818), abs=1e-5)


def test_spearman_interval_uses_the_bonett_wright_variance() -> None:
    # Bonett & Wright (2000): Var(z) = (1 + ρ²/2)/(n − 3). ρ = 0.5, n = 28: (1 + 0.125)/25 = 0.045,
    # SE = 0.212132, half-width 1.959964·0.212132 = 0.415772 → tanh(0.549306 ∓ 0.415772)
    low, high = m.spearman_interval(0.5, 28)
    assert (low, high) == pytest.approx((math.tanh(0.133534), math.tanh(0.965078)), abs=1e-5)
    # Fieller et al. (1957): Var(z) = 1.06/(n − 3) is available too.
    fieller = m.fisher_z_interval(0.5, 28, variance="fieller")
    assert fieller == pytest.approx((math.tanh(0.549306 - 1.959964 * math.sqrt(1.06 / 25)),
                                     math.tanh(0.549306 + 1.959964 * math.sqrt(1.06 / 25))), abs=1e-5)


@pytest.mark.parametrize(
    ("rho", "n", "published"),
    [(0.827, 40, (69.4, 90.5)), (0.912, 50, (84.9, 94.9)), (0.804, 50, (67.7, 88.4)), (0.676, 30, (41.7, 83.3))],
)
def test_plain_fisher_z_reproduces_hume_table_8_sts_cis(rho: float, n: int, published: tuple) -> None:
    # HUME Table 8 (SICK-R, STS12, STSBenchmark, STS22-ara): the paper used Var(z) = 1/(n − 3) for
    # Spearman; ρ is printed to 3 digits, so allow 0.1 points.
    low, high = m.fisher_z_interval(rho, n)
    assert (100 * low, 100 * high) == pytest.approx(published, abs=0.1)


def test_fisher_z_edge_cases() -> None:
    assert m.fisher_z_interval(1.0, 10) == (1.0, 1.0)
    assert m.fisher_z_interval.explain(0.5, 3)[0] is None
    assert m.spearman_interval.explain(None, 30)[0] is None


def test_annotator_range_is_min_to_max() -> None:
    # HUME ArxivClusteringP2P: two annotators 35.3 and 63.2 → 49.2 [35.3, 63.2] (mean and range)
    assert m.annotator_range([0.632, None, 0.353]) == (0.353, 0.632)
    assert m.annotator_range.explain([None])[0] is None


def test_bootstrap_interval_is_deterministic_and_brackets_the_mean() -> None:
    values = [0.2, 0.5, 0.9, 0.4, 0.7, 0.6, 0.3, 0.8]
    first = m.bootstrap_interval(values)
    assert first == m.bootstrap_interval(values)  # seeded
    assert first[0] < sum(values) / len(values) < first[1]
    assert m.bootstrap_interval([0.4]) == (0.4, 0.4)
    assert m.bootstrap_interval([0.4, 0.4, 0.4]) == (0.4, 0.4)
    assert m.bootstrap_interval.explain([])[0] is None
