"""Correlations against gold and mean pairwise correlations among annotators."""

import numpy as np
import pytest

from measures import metrics as m

nan = np.nan


def test_spearman_by_the_textbook_rank_difference_formula() -> None:
    # Spearman (1904): ρ = 1 − 6Σd²/(n(n²−1)). Ranks 1..5 vs 1,2,3,5,4 → Σd² = 2
    # → ρ = 1 − 12/120 = 0.9.
    assert m.spearman([1, 2, 3, 4, 5], [10, 20, 30, 50, 40]) == pytest.approx(0.9, abs=1e-12)


def test_pearson_and_kendall_by_hand() -> None:
    # x = 1,2,3; y = 1,3,2: r = Σ(dx·dy)/√(Σdx²Σdy²) = (1·−1 + 0 + 1·0)/√(2·2) = … = 0.5
    assert m.pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5, abs=1e-12)
    # 3 pairs: (1,2) concordant, (1,3) concordant, (2,3) discordant → τ = (2 − 1)/3
    assert m.kendall([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3, abs=1e-12)


def test_sage_maps_a_correlation_to_zero_one() -> None:
    assert m.sage_score(0.6) == pytest.approx(0.8)
    assert m.sage_score(None) is None


def test_correlation_is_none_with_a_reason_on_constant_ratings() -> None:
    for metric in (m.spearman, m.pearson, m.kendall):
        value, reason = metric.explain([3, 3, 3, 3], [1, 2, 3, 4])
        assert value is None and "constant" in reason
    assert m.spearman.explain([1], [1])[0] is None


def test_spearman_mean_averages_annotator_pairs_on_shared_items() -> None:
    ratings = np.array([
        [1.0, 1.0, 2.0],
        [2.0, 3.0, nan],
        [3.0, 2.0, 1.0],
        [4.0, 4.0, 3.0],
    ])
    # (a,b): 1,2,3,4 vs 1,3,2,4 → Σd² = 2 → ρ = 1 − 12/60 = 0.8
    # (a,c) on items 1,3,4: 1,3,4 vs 2,1,3 → ranks 1,2,3 vs 2,1,3 → Σd² = 2 → 1 − 12/24 = 0.5
    # (b,c) on items 1,3,4: 1,2,4 vs 2,1,3 → same ranks → 0.5
    assert m.spearman_mean(ratings) == pytest.approx((0.8 + 0.5 + 0.5) / 3, abs=1e-12)


def test_pairwise_correlation_skips_constant_pairs_and_reports_when_all_are_constant() -> None:
    ratings = np.array([[1.0, 1.0, 2.0], [2.0, 1.0, 3.0], [3.0, 1.0, 4.0]])
    assert m.pearson_mean(ratings) == pytest.approx(1.0)  # only the (a, c) pair is defined
    value, reason = m.spearman_mean.explain(np.full((3, 2), 4.0))
    assert value is None and "constant" in reason
    assert m.kendall_mean.explain(ratings[:, :1]) == (None, m.SINGLE_ANNOTATOR)


def test_grouped_correlation_is_per_query_and_counts_the_queries_left_out() -> None:
    # HUME's reranking agreement: Spearman per query over rater pairs, then the mean over queries.
    ratings = np.array([[1, 1], [0, 1], [1, 0], [0, 0],   # q1: φ = 0
                        [0, 0], [1, 1], [0, 0],           # q2: identical → 1
                        [1, 0], [0, 0],                   # q3: rater 2 constant → left out
                        [1, np.nan], [0, np.nan]], float)  # q4: one rater → not a query of the agreement
    value, used, left_out = m.grouped_correlation(ratings, [0, 4, 7, 9, 11], m.spearman_rho)
    assert (value, used, left_out) == (pytest.approx(0.5), 2, 1)
