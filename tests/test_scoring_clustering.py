"""score_task for clustering: V-measure per annotator (HUME's main clustering metric), mean over
annotators, annotator-range CI, mean pairwise ARI agreement. Values from sklearn's documented
examples (V-measure of [0,0,1,2] vs [0,0,1,1] = 0.8; ARI = 4/7)."""

import pytest

from agreement.core.scoring import score_task

GOLD = {"set1": [0, 0, 1, 1]}
ANSWERS = {"set1": {"alice": [0, 0, 1, 2], "bob": ["x", "x", "y", "y"]}}


def test_human_v_measure_is_the_mean_over_annotators_with_their_range_as_ci() -> None:
    report = score_task("clustering", ANSWERS, GOLD)
    human = report["human"]
    # alice: V-measure 0.8 (one gold cluster split); bob: 1.0 (same partition, other ids)
    assert human["main_metric"] == "v_measure"
    assert human["main_score"] == pytest.approx(0.9)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx((0.8, 1.0))
    assert human["ci_method"] == "annotator_range"
    assert human["scores"]["ari"] == pytest.approx((4 / 7 + 1) / 2)
    assert set(human["scores"]) == {"v_measure", "ari", "ami"}


def test_agreement_is_mean_pairwise_ari() -> None:
    report = score_task("clustering", ANSWERS, GOLD)
    assert report["agreement"] == {"ari_mean": pytest.approx(4 / 7)}
    assert report["agreement_bands"] == {"ari_mean": "moderate"}
    assert report["flags"]["low_agreement"] is False


def test_disagreement_is_the_share_of_text_pairs_put_together_by_one_and_apart_by_the_other() -> None:
    report = score_task("clustering", ANSWERS, GOLD)
    # 6 text pairs; alice joins only (1,2), bob joins (1,2) and (3,4) → they differ on 1 of 6.
    # Against gold: alice differs on 1 of 6, bob on 0 → mean 1/12.
    assert report["disagreement"] == [
        {"item": "set1", "disagreement": pytest.approx(1 / 6), "gold_disagreement": pytest.approx(1 / 12)}
    ]


def test_two_text_clustering_is_answered() -> None:
    report = score_task("clustering", {"s": {"alice": [1, 2], "bob": [1, 1]}}, {"s": ["p", "q"]})
    # alice matches gold (V = 1), bob lumps both (V = 0); ARI between them 0; one pair, they differ.
    assert report["human"]["main_score"] == pytest.approx(0.5)
    assert (report["human"]["ci_low"], report["human"]["ci_high"]) == (0.0, 1.0)
    assert report["agreement"]["ari_mean"] == pytest.approx(0.0)
    assert report["disagreement"][0]["disagreement"] == 1.0
    assert report["flags"]["low_agreement"] is True


def test_an_answer_of_the_wrong_length_is_excluded_with_the_reason() -> None:
    answers = {"set1": {"alice": [0, 0, 1, 2], "bob": [0, 0, 1]}}
    report = score_task("clustering", answers, GOLD)
    assert report["excluded"] == [{"item": "set1", "reason": "bob: 3 cluster ids for 4 texts"}]
    assert report["human"]["main_score"] == pytest.approx(0.8)
    assert report["agreement"]["ari_mean"] is None


def test_several_sets_average_per_annotator_then_over_annotators() -> None:
    gold = {"s1": [0, 0, 1, 1], "s2": ["a", "b"]}
    answers = {"s1": {"alice": [0, 0, 1, 2], "bob": [0, 0, 1, 1]}, "s2": {"alice": [1, 2], "bob": [1, 1]}}
    human = score_task("clustering", answers, gold)["human"]
    # alice: (0.8 + 1)/2 = 0.9; bob: (1 + 0)/2 = 0.5 → human 0.7, range [0.5, 0.9]
    assert human["main_score"] == pytest.approx(0.7)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx((0.5, 0.9))


# Three sets: s1 as in GOLD, s2 of two texts, s3 of three.
GOLD_3 = {"s1": [0, 0, 1, 1], "s2": ["a", "b"], "s3": ["x", "x", "y"]}


def test_one_annotator_of_three_sets_scores_three_items_by_one_annotator() -> None:
    answers = {"s1": {"bob": [0, 0, 1, 1]}, "s2": {"bob": [1, 2]}, "s3": {"bob": [5, 5, 6]}}
    human = score_task("clustering", answers, GOLD_3)["human"]
    assert human["main_score"] == pytest.approx(1.0)  # every partition matches gold
    assert (human["n_items_scored"], human["n_annotators_scored"]) == (3, 1)
    assert (human["n"], human["n_unit"]) == (9, "texts")  # HUME's N for the Wilson CI: 4 + 2 + 3 texts


def test_two_annotators_count_every_set_either_clustered_and_the_two_of_them_apart() -> None:
    answers = {"s1": {"alice": [0, 0, 1, 2], "bob": [0, 0, 1, 1]}, "s2": {"bob": [1, 2]}, "s3": {"bob": [5, 5, 6]}}
    report = score_task("clustering", answers, GOLD_3)
    # alice: 0.8 on s1 alone; bob: 1.0 → human 0.9
    assert report["human"]["main_score"] == pytest.approx(0.9)
    assert (report["human"]["n_items_scored"], report["human"]["n_annotators_scored"]) == (3, 2)
    assert report["n_annotators"] == 2
