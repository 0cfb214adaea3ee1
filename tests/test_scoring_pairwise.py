"""score_task for pairwise preference (A, B or tie): majority vote, accuracy, P/R/F1, Wilson.

item  alice  bob   gold   majority
1     a      a     a      a    ✓
2     b      tie   b      tie → "b" (lexicographically before "tie") ✓
3     tie    tie   a      tie  ✗
4     a      b     b      tie → "a" ✗
"""

import pytest

from agreement.core.scoring import score_task
from measures import metrics as m

ANSWERS = {
    1: {"alice": "a", "bob": "a"},
    2: {"alice": "b", "bob": "tie"},
    3: {"alice": "tie", "bob": "tie"},
    4: {"alice": "a", "bob": "b"},
}
GOLD = {1: "a", 2: "b", 3: "a", 4: "b"}


def test_pairwise_majority_vote_scores_by_hand() -> None:
    report = score_task("pairwise", ANSWERS, GOLD)
    human = report["human"]
    assert human["main_metric"] == "accuracy"
    assert human["main_score"] == pytest.approx(0.5)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx(m.wilson_interval(2, 4))
    # predicted a, b, tie, a vs gold a, b, a, b:
    # a: P = 1/2, R = 1/2; b: P = 1, R = 1/2; tie: P = 0, R = 0 (no support) → macro P = 1/2, R = 1/3;
    # F1: a 1/2, b 2/3, tie 0 → macro F1 = 7/18
    assert human["scores"]["precision"] == pytest.approx(1 / 2)
    assert human["scores"]["recall"] == pytest.approx(1 / 3)
    assert human["scores"]["f1"] == pytest.approx(7 / 18)


def test_pairwise_agreement_uses_fleiss_and_nominal_alpha() -> None:
    agreement = score_task("pairwise", ANSWERS, GOLD)["agreement"]
    # per item agreement 1, 0, 1, 0 → P̄ = 1/2; marginals a 3/8, b 2/8, tie 3/8 → P̄e = 22/64
    # κ = (32/64 − 22/64)/(1 − 22/64) = 10/42 = 5/21
    assert agreement["fleiss_kappa"] == pytest.approx(5 / 21)
    assert agreement["percent_agreement"] == pytest.approx(0.5)
    assert set(agreement) == {"fleiss_kappa", "krippendorff_alpha", "cohen_kappa_mean", "percent_agreement",
                              "gwet_ac1"}
