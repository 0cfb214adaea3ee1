"""Fleiss' κ, mean pairwise Cohen's κ and percentage agreement against published worked examples."""

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters

from measures import metrics as m

# Fleiss (1971), Psychological Bulletin 76(5):378, Table 1: 30 patients, 6 psychiatrists each,
# 5 diagnoses (1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other).
# Raw ratings as reproduced by R's irr::diagnoses (and statsmodels' test data). Published κ = .430.
FLEISS_1971 = np.array([
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
])

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects × 14 raters, 5 categories (counts per
# category). P̄ = 0.378, P̄e = 0.213, κ = (0.378 − 0.213)/(1 − 0.213) = 0.210.
WIKIPEDIA_TABLE = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def codes_of(ratings: np.ndarray) -> tuple[np.ndarray, list]:
    codes, categories = m.encode_labels(ratings.ravel().tolist())
    return codes.reshape(ratings.shape), categories


def test_fleiss_kappa_reproduces_fleiss_1971_psychiatric_diagnoses() -> None:
    codes, categories = codes_of(FLEISS_1971)
    table = m.count_table(codes, len(categories))
    assert m.fleiss_kappa(table) == pytest.approx(0.430, abs=5e-4)  # published to 3 decimals
    assert m.fleiss_kappa(table) == pytest.approx(0.4302445, abs=1e-7)  # R irr::kappam.fleiss


def test_count_table_matches_statsmodels_aggregate_raters() -> None:
    codes, categories = codes_of(FLEISS_1971)
    expected, _ = aggregate_raters(FLEISS_1971)
    np.testing.assert_array_equal(m.count_table(codes, len(categories)), expected)


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example() -> None:
    assert m.fleiss_kappa(WIKIPEDIA_TABLE) == pytest.approx(0.210, abs=5e-4)
    # P̄ of the same example is 0.378: Fleiss' observed agreement is our percent_agreement.
    assert m.percent_agreement(WIKIPEDIA_TABLE) == pytest.approx(0.378, abs=5e-4)


def test_cohen_kappa_mean_reproduces_the_wikipedia_two_rater_example() -> None:
    # Wikipedia, "Cohen's kappa", example: 50 grant proposals read by A and B.
    # yes/yes 20, A yes/B no 5, A no/B yes 10, no/no 15 → p_o = 35/50 = 0.7;
    # p_yes = 0.5·0.6 = 0.30, p_no = 0.5·0.4 = 0.20, p_e = 0.5 → κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    codes, _ = m.encode_labels([v for pair in zip(a, b, strict=True) for v in pair])
    assert m.cohen_kappa_mean(codes.reshape(50, 2)) == pytest.approx(0.4, abs=1e-12)


def test_cohen_kappa_mean_averages_pairs_on_shared_items_only() -> None:
    # Rater 3 has missing ratings (-1); each pair uses the items both rated.
    codes = np.array([[0, 0, 0], [1, 1, -1], [0, 1, 1], [1, 1, 1], [0, 0, -1]])
    # pair(1,2): 5 items, p_o = 4/5, p_e = (3/5·2/5 + 2/5·3/5) = 12/25 → κ = (20/25 − 12/25)/(13/25) = 8/13
    # pair(1,3): items 1,3,4: (0,0),(0,1),(1,1): p_o = 2/3, p_e = 2/3·1/3 + 1/3·2/3 = 4/9 → κ = (2/9)/(5/9) = 0.4
    # pair(2,3): items 1,3,4: (0,0),(1,1),(1,1): κ = 1
    assert m.cohen_kappa_mean(codes) == pytest.approx((8 / 13 + 0.4 + 1.0) / 3, abs=1e-12)


def test_percent_agreement_with_two_raters_is_the_share_of_items_they_agree_on() -> None:
    codes = np.array([[0, 0], [1, 0], [2, 2], [1, 1]])
    assert m.percent_agreement(m.count_table(codes, 3)) == pytest.approx(0.75)


def test_kappa_is_none_with_a_reason_when_all_answers_are_one_category() -> None:
    codes = np.zeros((5, 3), dtype=np.int64)
    table = m.count_table(codes, 2)
    for metric, data in ((m.fleiss_kappa, table), (m.cohen_kappa_mean, codes)):
        value, reason = metric.explain(data)
        assert value is None
        assert "one category" in reason


def test_kappa_is_not_applicable_with_a_single_annotator() -> None:
    codes = np.array([[0], [1], [1]])
    assert m.cohen_kappa_mean.explain(codes) == (None, m.SINGLE_ANNOTATOR)
    assert m.fleiss_kappa.explain(m.count_table(codes, 2))[0] is None
    assert m.percent_agreement.explain(m.count_table(codes, 2))[0] is None


def test_fleiss_kappa_uses_the_largest_equal_rater_subset_when_overlap_varies() -> None:
    # Fleiss needs the same number of ratings per item; an item with 2 of 3 ratings is left out.
    table = np.vstack([WIKIPEDIA_TABLE, [[0, 1, 1, 0, 0]]])
    assert m.fleiss_rows(table).tolist() == [True] * 10 + [False]
    assert m.fleiss_kappa(table) == pytest.approx(m.fleiss_kappa(WIKIPEDIA_TABLE))


def test_majority_vote_breaks_ties_towards_the_lexicographically_first_label() -> None:
    codes, categories = m.encode_labels(["sadness", "joy", "anger", "anger", None, None])
    table = m.count_table(codes.reshape(3, 2), len(categories))
    assert categories == ["anger", "joy", "sadness"]
    assert [categories[c] if c >= 0 else None for c in m.majority_vote(table)] == ["joy", "anger", None]


def test_label_scores_match_sklearn_definitions() -> None:
    # label_scores is a one-bincount shortcut for speed; it must agree with sklearn exactly.
    from sklearn import metrics as skm

    rng = np.random.default_rng(7)
    for _ in range(40):
        n_categories = int(rng.integers(2, 6))
        y_true = rng.integers(0, n_categories, size=int(rng.integers(1, 40)))
        y_pred = rng.integers(0, n_categories, size=y_true.size)
        got = m.label_scores(y_true, y_pred, n_categories)
        assert got["accuracy"] == pytest.approx(skm.accuracy_score(y_true, y_pred), abs=1e-12)
        for key, average in (("f1_macro", "macro"), ("f1_weighted", "weighted")):
            assert got[key] == pytest.approx(skm.f1_score(y_true, y_pred, average=average, zero_division=0), abs=1e-12)
        assert got["precision_macro"] == pytest.approx(m.precision_macro(y_true, y_pred), abs=1e-12)
        assert got["recall_macro"] == pytest.approx(m.recall_macro(y_true, y_pred), abs=1e-12)
    assert m.label_scores([], [], 3)["accuracy"] is None


def test_agreement_bands_follow_hume_appendix_f() -> None:
    # HUME Appendix F: κ 0.39 "fair", 0.55 "moderate"; ρ 0.85 "strong", 0.64 "moderate".
    assert m.agreement_band(0.39, "chance") == "fair"
    assert m.agreement_band(0.55, "chance") == "moderate"
    assert m.agreement_band(0.81, "chance") == "excellent"
    assert m.agreement_band(0.8, "chance") == "substantial"  # 0.6 < κ ≤ 0.8
    assert m.agreement_band(0.2, "chance") == "poor"
    assert m.agreement_band(0.85, "correlation") == "strong"
    assert m.agreement_band(0.64, "correlation") == "moderate"
    assert m.agreement_band(0.4, "correlation") == "weak"
    assert m.agreement_band(None, "chance") is None


def test_validity_flag_fires_below_kappa_0_4_and_rho_0_6() -> None:
    assert m.is_low_agreement(0.39, "chance")  # HUME EmotionClassification κ = 0.39
    assert not m.is_low_agreement(0.41, "chance")
    assert m.is_low_agreement(0.58, "correlation")  # HUME STSBenchmark ρ = 0.58
    assert not m.is_low_agreement(0.63, "correlation")
    assert not m.is_low_agreement(None, "chance")
