"""score_task for classification: majority vote, accuracy + F1, Wilson CI, κ family, LLM apart.

Small hand-computed task: alice and bob are human, gpt is an LLM annotator.
item  alice  bob    gpt    gold   human majority (alice, bob)
1     joy    joy    joy    joy    joy   ✓
2     sad    joy    sad    sad    tie → "joy" (lexicographically first) ✗
3     sad    sad    joy    sad    sad   ✓
4     anger  (skip) anger  anger  anger ✓
"""

import json

import pytest

from agreement.core.scoring import score_task
from measures import metrics as m

ANSWERS = {
    1: {"alice": "joy", "bob": "joy", "gpt": "joy"},
    2: {"alice": "sad", "bob": "joy", "gpt": "sad"},
    3: {"alice": "sad", "bob": "sad", "gpt": "joy"},
    4: {"alice": "anger", "bob": None, "gpt": "anger"},
}
GOLD = {1: "joy", 2: "sad", 3: "sad", 4: "anger"}
ANNOTATOR_AGENTS = {"alice": "human", "bob": "human", "gpt": "llm"}


@pytest.fixture
def report() -> dict:
    # three shared items: below the default minimum of 10 for Cohen's κ, so this tiny task lowers it
    return score_task("classification", ANSWERS, GOLD, annotator_agents=ANNOTATOR_AGENTS, kappa_min_shared=3)


def test_human_score_is_majority_vote_accuracy_with_a_wilson_ci(report: dict) -> None:
    human = report["human"]
    assert human["main_metric"] == "accuracy"
    assert human["main_score"] == pytest.approx(3 / 4)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx(m.wilson_interval(3, 4))
    assert human["ci_method"] == "wilson"
    assert human["n_items_scored"] == 4
    # predictions joy, joy, sad, anger vs gold joy, sad, sad, anger:
    # F1 joy = 2·1/(1+2) = 2/3, sad = 2·1/(2+1) = 2/3, anger = 1 → macro 7/9;
    # weighted by support (1, 2, 1): (2/3 + 4/3 + 1)/4 = 3/4
    assert human["scores"]["f1_macro"] == pytest.approx(7 / 9)
    assert human["scores"]["f1_weighted"] == pytest.approx(3 / 4)


def test_agreement_counts_humans_only(report: dict) -> None:
    agreement = report["agreement"]
    # Items 1–3 have two ratings: per-item agreement 1, 0, 1 → P̄ = 2/3; p_joy = p_sad = 1/2 → P̄e = 1/2
    # Fleiss κ = (2/3 − 1/2)/(1/2) = 1/3
    assert agreement["fleiss_kappa"] == pytest.approx(1 / 3)
    # Cohen: p_o = 2/3; alice joy 1/3 sad 2/3, bob joy 2/3 sad 1/3 → p_e = 4/9 → κ = (2/9)/(5/9) = 0.4
    assert agreement["cohen_kappa_mean"] == pytest.approx(0.4)
    # Krippendorff nominal: n = 6 pairable values, one disagreeing unit (2 ordered pairs, m − 1 = 1)
    # α = 1 − (n − 1)·2/(n² − Σn_c²) = 1 − 5·2/(36 − 18) = 4/9
    assert agreement["krippendorff_alpha"] == pytest.approx(4 / 9)
    assert agreement["percent_agreement"] == pytest.approx(2 / 3)
    # Gwet's AC1 (measures/gwet.py): p_a = 2/3 (items 1–3); prevalences over the 4 rated items (item 4: alice's
    # anger alone) π_anger = 1/4, π_joy = π_sad = 3/8 → p_e = Σπ(1 − π)/(q − 1) = (21/32)/2 = 21/64
    # AC1 = (2/3 − 21/64)/(1 − 21/64) = 65/129
    assert agreement["gwet_ac1"] == pytest.approx(65 / 129)
    assert report["agreement_intervals"]["gwet_ac1"]["chance"] == pytest.approx(21 / 64)
    assert report["agreement_bands"] == {
        "fleiss_kappa": "fair", "cohen_kappa_mean": "fair", "krippendorff_alpha": "moderate", "gwet_ac1": "moderate",
    }


def test_low_kappa_raises_the_validity_flag(report: dict) -> None:
    assert report["flags"]["low_agreement"] is True
    assert report["flags"]["message"] == m.LOW_AGREEMENT_MESSAGE


def test_every_annotator_is_scored_and_llms_are_reported_apart(report: dict) -> None:
    by_name = {a["name"]: a for a in report["annotators"]}
    assert by_name["alice"]["scores"]["accuracy"] == pytest.approx(1.0)
    assert by_name["bob"]["scores"]["accuracy"] == pytest.approx(2 / 3)
    assert (by_name["bob"]["n_answers"], by_name["bob"]["n_skipped"]) == (3, 1)
    assert by_name["gpt"]["agent"] == "llm"
    assert by_name["gpt"]["scores"]["accuracy"] == pytest.approx(3 / 4)
    assert report["llm"] == {"annotators": ["gpt"], "included_in_human": False, "main_score_mean": 0.75}
    assert (report["n_items"], report["n_annotators"], report["n_answers"], report["n_skipped"]) == (4, 2, 7, 1)


def test_include_llm_lets_the_llm_vote(report: dict) -> None:
    with_llm = score_task("classification", ANSWERS, GOLD, annotator_agents=ANNOTATOR_AGENTS, include_llm=True)
    # item 2 becomes sad (alice, gpt) and item 3 stays sad (alice, bob): all 4 correct
    assert with_llm["human"]["main_score"] == pytest.approx(1.0)
    assert with_llm["n_annotators"] == 3
    assert with_llm["llm"]["included_in_human"] is True


def test_disagreement_lists_the_most_disagreed_items_first(report: dict) -> None:
    rows = report["disagreement"]
    assert rows[0] == {"item": 2, "disagreement": 0.5, "gold_disagreement": 0.5}
    assert [r["item"] for r in rows] == [2, 1, 3, 4]
    assert rows[-1] == {"item": 4, "disagreement": 0.0, "gold_disagreement": 0.0}


def test_the_report_is_strict_json(report: dict) -> None:
    json.dumps(report, allow_nan=False)
    assert set(report) >= {
        "kind", "n_items", "n_annotators", "n_answers", "n_skipped", "agreement", "agreement_notes",
        "agreement_bands", "human", "annotators", "excluded", "flags", "disagreement",
    }


def test_labels_from_the_task_and_an_item_without_gold() -> None:
    answers = {**ANSWERS, 5: {"alice": "fear", "bob": "fear"}}
    labels = ["anger", "fear", "joy", "sad", "surprise"]
    report = score_task("classification", answers, GOLD, labels=labels, annotator_agents=ANNOTATOR_AGENTS)
    assert {"item": 5, "reason": "no gold"} in report["excluded"]
    assert report["human"]["n_items_scored"] == 4
    # item 5 still counts for agreement: items 1, 2, 3, 5 → P̄ = 3/4
    assert report["agreement"]["percent_agreement"] == pytest.approx(3 / 4)


def test_hume_emotion_classification_sized_task_reproduces_table_8() -> None:
    # HUME Table 8: EmotionClassification, N = 48, K = 2, human 45.8 [32.6, 59.7] (22 of 48 correct).
    answers = {i: {"alice": "joy" if i < 22 else "sadness", "bob": "joy" if i < 22 else "anger"} for i in range(48)}
    gold = dict.fromkeys(range(48), "joy")
    human = score_task("classification", answers, gold)["human"]
    # items ≥ 22 tie between anger and sadness → "anger" (lexicographic) ≠ gold
    assert 100 * human["main_score"] == pytest.approx(45.8, abs=0.05)
    assert (100 * human["ci_low"], 100 * human["ci_high"]) == pytest.approx((32.6, 59.7), abs=0.05)


def test_the_tie_rule_is_named_with_the_tied_share_and_a_seeded_random_tie_score(report) -> None:
    human = report["human"]
    # item 2 is the only tie (alice sad, bob joy) among 4 scored items; the fixed rule picks "joy" (wrong),
    # the seeded coin picks "sad" here — so the rule costs the human row 0.25 on this task.
    assert human["tie_rule"] == "lexicographically first label"
    assert human["combination"] == "majority vote per item, ties to the lexicographically first label"
    assert (human["n_tied_items"], human["tied_share"]) == (1, 0.25)
    assert (human["main_score"], human["main_score_random_ties"], human["tie_seed"]) == (0.75, 1.0, 0)
    assert score_task("classification", ANSWERS, GOLD, annotator_agents=ANNOTATOR_AGENTS)["human"] == human  # seeded


def test_a_random_tie_break_picks_only_among_the_tied_labels_and_evenly() -> None:
    import numpy as np

    table = np.array([[1, 1, 0], [2, 0, 0], [1, 1, 1]])
    picks = np.array([m.majority_vote(table, np.random.default_rng(seed)) for seed in range(2000)])
    assert set(picks[:, 1]) == {0}  # no tie: the majority, whatever the draw
    assert np.bincount(picks[:, 0], minlength=3)[2] == 0  # never the label outside the tie
    assert abs((picks[:, 0] == 0).mean() - 0.5) < 0.05
    assert list(m.tied_items(table)) == [True, False, True]
