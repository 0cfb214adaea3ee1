"""score_task for reranking: per-annotator MAP (sklearn AP of 0/1 judgments), MRR@10, nDCG@10,
mean over annotators with the annotator range as CI; a query without a relevant gold candidate scores 0
and is averaged in and counted (as pytrec_eval and MTEB count it). Every expected value is worked out by
hand below."""

import math

import pytest

from agreement.core.scoring import score_task

GOLD = {
    "q1": {"c1": 1, "c2": 0, "c3": 1, "c4": 0},
    "q2": {"c1": 0, "c2": 1, "c3": 0},
    "q3": {"c1": 0, "c2": 0},  # no relevant candidate
}
ANSWERS = {
    "q1": {"alice": {"c1": 1, "c2": 1, "c3": 0, "c4": 0}, "bob": {"c1": 1, "c2": 0, "c3": 1, "c4": 0}},
    "q2": {"alice": {"c1": 0, "c2": 1, "c3": 0}, "bob": {"c1": 0, "c2": 1, "c3": 0}},
    "q3": {"alice": {"c1": 1, "c2": 0}, "bob": {"c1": 0, "c2": 0}},
}


def test_map_is_the_mean_over_annotators_with_their_range_as_ci() -> None:
    report = score_task("reranking", ANSWERS, GOLD)
    by_name = {a["name"]: a["scores"] for a in report["annotators"]}
    # alice q1: judged {c1, c2}: P = 1/2 at R = 1/2, then all 4: P = 2/4 at R = 1 → AP = 0.25 + 0.25 = 0.5
    #       q2: judged {c2} = the relevant one → AP = 1; q3 no relevant candidate → 0   → MAP 1.5/3 = 0.5
    # bob   q1: judged {c1, c3} = both relevant → 1; q2 → 1; q3 → 0                    → MAP 2/3
    assert by_name["alice"]["map"] == pytest.approx(0.5)
    assert by_name["bob"]["map"] == pytest.approx(2 / 3)
    human = report["human"]
    assert human["main_metric"] == "map"
    assert human["main_score"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx((0.5, 2 / 3))
    assert human["ci_method"] == "annotator_range"


def test_mrr_and_ndcg_are_tie_aware() -> None:
    by_name = {a["name"]: a["scores"] for a in score_task("reranking", ANSWERS, GOLD)["annotators"]}
    # alice q1: c1, c2 tied on top, one relevant → RR = 1/2·1 + 1/2·1/2 = 0.75; q2 → 1; q3 → 0 → MRR 1.75/3
    assert by_name["alice"]["mrr_at_10"] == pytest.approx(1.75 / 3)
    # alice q1 nDCG (tie-averaged gains): top group slots 1–2, mean gain 1/2 → 0.5·(1 + 1/log2 3);
    # next group slots 3–4, mean gain 1/2 → 0.5·(1/2 + 1/log2 5); IDCG = 1 + 1/log2 3
    dcg = 0.5 * (1 + 1 / math.log2(3)) + 0.5 * (0.5 + 1 / math.log2(5))
    q1 = dcg / (1 + 1 / math.log2(3))
    assert by_name["alice"]["ndcg_at_10"] == pytest.approx((q1 + 1.0 + 0.0) / 3)  # q3: no relevant candidate → 0
    assert by_name["bob"]["ndcg_at_10"] == pytest.approx(2 / 3)


def test_query_without_relevant_candidate_scores_zero_and_is_counted() -> None:
    report = score_task("reranking", ANSWERS, GOLD)
    assert report["excluded"] == []  # scored (0), as pytrec_eval and MTEB count it
    assert report["human"]["n_queries_without_relevant"] == 1


def test_rank_agreement_is_per_query_then_averaged_with_the_left_out_queries_counted() -> None:
    report = score_task("reranking", ANSWERS, GOLD)
    agreement = report["agreement"]
    # per query, as HUME's scoring script: q1 alice 1100, bob 1010 → n11 = n10 = n01 = n00 = 1 → φ = 0;
    # q2 both 010 → 1; q3 bob judged 00 (constant) → left out. Mean over q1, q2 = 0.5 (ρ and τ-b alike).
    assert agreement["spearman_mean"] == pytest.approx(0.5)
    assert agreement["kendall_mean"] == pytest.approx(0.5)
    assert report["agreement_counts"] == {"n_queries": 2, "n_queries_left_out": 1}
    assert report["agreement_notes"]["spearman_mean"] == "mean over 2 queries; 1 left out (constant judgments)"


def test_binary_agreement_over_candidate_judgments() -> None:
    agreement = score_task("reranking", ANSWERS, GOLD, kappa_min_shared=9)["agreement"]
    # 9 judgments each: alice 1100 010 10, bob 1010 010 00 → n11 = 2, n10 = 2, n01 = 1, n00 = 4.
    # Cohen: p_o = 6/9; p_e = 4/9·3/9 + 5/9·6/9 = 42/81 → κ = (54 − 42)/(81 − 42) = 12/39
    assert agreement["cohen_kappa_mean"] == pytest.approx(12 / 39)
    assert agreement["percent_agreement"] == pytest.approx(6 / 9)


def test_low_spearman_flags_the_task() -> None:
    flags = score_task("reranking", ANSWERS, GOLD)["flags"]
    assert flags["low_agreement"] is True
    assert flags["metrics"] == ["spearman_mean"]


def test_an_unmarked_candidate_counts_as_not_relevant() -> None:
    answers = {"q2": {"alice": {"c2": 1}}}
    report = score_task("reranking", answers, GOLD)
    assert report["annotators"][0]["scores"]["map"] == pytest.approx(1.0)
    assert report["agreement"]["spearman_mean"] is None
    assert report["agreement_notes"]["spearman_mean"] == "n/a: single annotator"


# Four queries of three candidates, c1 the relevant one in each.
GOLD_4 = {f"q{q}": {"c1": 1, "c2": 0, "c3": 0} for q in range(1, 5)}
BOB_4 = {"q1": {"c1": 1}, "q2": {"c1": 1, "c2": 1}, "q3": {"c1": 1}, "q4": {"c1": 1}}


def test_one_annotator_of_four_queries_scores_four_items_by_one_annotator() -> None:
    human = score_task("reranking", {q: {"bob": v} for q, v in BOB_4.items()}, GOLD_4)["human"]
    # AP: c1 alone → 1; q2 c1 and c2 tied on top, one relevant → 1/2. MAP (1 + 1/2 + 1 + 1)/4 = 0.875.
    assert human["main_score"] == pytest.approx(0.875)
    assert (human["n_items_scored"], human["n_annotators_scored"]) == (4, 1)
    assert (human["n"], human["n_unit"], human["ci_method"]) == (4, "queries", "wilson (one annotator, N = queries)")


def test_two_annotators_count_every_query_either_scored_and_the_two_of_them_apart() -> None:
    answers = {q: {"bob": v} for q, v in BOB_4.items()}
    answers["q1"]["alice"] = {"c1": 1}  # alice judged one query only
    report = score_task("reranking", answers, GOLD_4)
    assert (report["human"]["n_items_scored"], report["human"]["n_annotators_scored"]) == (4, 2)
    assert report["n_annotators"] == 2


def test_a_query_without_relevant_candidate_is_counted_as_scored() -> None:
    human = score_task("reranking", ANSWERS, GOLD)["human"]
    assert (human["n_items_scored"], human["n_annotators_scored"], human["n_queries_without_relevant"]) == (3, 2, 1)
