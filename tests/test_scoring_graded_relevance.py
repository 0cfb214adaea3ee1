"""score_task for graded relevance: mean score per document, rank, nDCG@k with trec_eval's linear gains
(the grade itself, as MTEB computes through pytrec_eval; 2^rel − 1 as a labelled option), Recall@k at a
threshold, seeded bootstrap CI over queries. k = 2 keeps the hand computation short.

q1  gold d1 3, d2 1, d3 0   alice 9, 1, 5   bob 7, 3, 5   mean 8, 2, 5 → ranking d1, d3, d2
q2  gold d1 0, d2 2         alice 2, 8      bob 4, 6      mean 3, 7    → ranking d2, d1
"""

import math

import krippendorff
import numpy as np
import pytest

from agreement.core.scoring import score_task

GOLD = {"q1": {"d1": 3, "d2": 1, "d3": 0}, "q2": {"d1": 0, "d2": 2}}
ANSWERS = {
    "q1": {"alice": {"d1": 9, "d2": 1, "d3": 5}, "bob": {"d1": 7, "d2": 3, "d3": 5}},
    "q2": {"alice": {"d1": 2, "d2": 8}, "bob": {"d1": 4, "d2": 6}},
}


def test_human_ndcg_at_k_uses_trec_eval_linear_gains_by_default() -> None:
    human = score_task("graded_relevance", ANSWERS, GOLD, k=2)["human"]
    # trec_eval ndcg_cut (m_ndcg_cut.c) takes the relevance level as the gain:
    # q1 top 2 = d1 (gain 3), d3 (0): DCG = 3; IDCG@2 = 3 + 1/log2 3; q2 perfect → 1
    q1 = 3 / (3 + 1 / math.log2(3))
    assert human["main_score"] == pytest.approx((q1 + 1) / 2)
    assert human["ndcg_gains"].startswith("linear: gain = grade (trec_eval")


def test_human_ndcg_at_k_of_mean_scores_with_exponential_gains() -> None:
    human = score_task("graded_relevance", ANSWERS, GOLD, k=2, gains="exponential")["human"]
    assert human["ndcg_gains"].startswith("exponential: gain = 2^grade - 1")
    # q1 top 2 = d1 (gain 2³ − 1 = 7), d3 (0): DCG = 7; IDCG@2 = 7 + 1/log2 3 → 0.917321; q2 perfect → 1
    q1 = 7 / (7 + 1 / math.log2(3))
    assert human["main_metric"] == "ndcg_at_2"
    assert human["main_score"] == pytest.approx((q1 + 1) / 2)
    # Recall@2 (gold ≥ 1 relevant): q1 finds d1 of {d1, d2} → 1/2; q2 finds d2 → 1
    assert human["scores"]["recall_at_2"] == pytest.approx(0.75)
    assert human["ci_method"] == "bootstrap_bca"
    assert q1 - 1e-9 <= human["ci_low"] <= human["main_score"] <= human["ci_high"] <= 1.0 + 1e-9


def test_recall_threshold_is_configurable() -> None:
    human = score_task("graded_relevance", ANSWERS, GOLD, k=2, relevance_threshold=2)["human"]
    # only d1 (q1) and d2 (q2) are relevant and both are in the top 2
    assert human["scores"]["recall_at_2"] == pytest.approx(1.0)


def test_graded_agreement_is_pearson_spearman_and_interval_alpha() -> None:
    agreement = score_task("graded_relevance", ANSWERS, GOLD)["agreement"]
    # units (q1 d1..d3, q2 d1..d2): alice 9,1,5,2,8; bob 7,3,5,4,6 (both mean 5)
    # dx = 4,−4,0,−3,3; dy = 2,−2,0,−1,1 → r = 22/√(50·10); ranks identical → ρ = 1
    assert agreement["pearson_mean"] == pytest.approx(22 / math.sqrt(500))
    assert agreement["spearman_mean"] == pytest.approx(1.0)
    data = np.array([[9, 1, 5, 2, 8], [7, 3, 5, 4, 6]], dtype=float)
    assert agreement["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="interval"))


def test_per_annotator_scores_use_their_own_ranking() -> None:
    annotators = score_task("graded_relevance", ANSWERS, GOLD, k=2)["annotators"]
    alice = next(a for a in annotators if a["name"] == "alice")
    # alice ranks q1 as d1, d3, d2 and q2 as d2, d1: the same as the mean (linear gains)
    assert alice["scores"]["ndcg_at_2"] == pytest.approx((3 / (3 + 1 / math.log2(3)) + 1) / 2)


def test_a_query_without_relevant_gold_scores_zero_and_is_counted() -> None:
    gold = {**GOLD, "q3": {"d1": 0, "d2": 0}}
    answers = {**ANSWERS, "q3": {"alice": {"d1": 5, "d2": 1}}}
    report = score_task("graded_relevance", answers, gold, k=2)
    before = score_task("graded_relevance", ANSWERS, GOLD, k=2)["human"]["main_score"]
    assert not any(e["item"] == "q3" for e in report["excluded"])
    # q3's nDCG is 0 (trec_eval, MTEB) and is averaged in: the mean over three queries is 2/3 of the two-query one
    assert report["human"]["main_score"] == pytest.approx(before * 2 / 3)
    assert (report["human"]["n_items_scored"], report["human"]["n_queries_without_relevant"]) == (3, 1)


def test_disagreement_with_gold_is_one_minus_the_query_ndcg() -> None:
    rows = score_task("graded_relevance", ANSWERS, GOLD, k=2)["disagreement"]
    # spread /10: q1 std(9,7)=1, std(1,3)=1, 0 → mean 2/30; q2 std(2,4)=1, std(8,6)=1 → 0.1
    assert rows[0] == {"item": "q2", "disagreement": pytest.approx(0.1), "gold_disagreement": pytest.approx(0.0)}
    assert rows[1]["item"] == "q1"
    assert rows[1]["disagreement"] == pytest.approx(2 / 30)
    assert rows[1]["gold_disagreement"] == pytest.approx(1 - 3 / (3 + 1 / math.log2(3)))
