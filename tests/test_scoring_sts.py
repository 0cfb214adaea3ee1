"""score_task for STS: mean rating per pair, Spearman vs gold (HUME main), Pearson, Fisher z CI.

pair  alice  bob  mean  gold
1     1      0    0.5   1
2     2      2    2     2
3     3      3    3     3
4     5      5    5     4
5     4      4    4     5
Mean ranks 1,2,3,5,4 vs gold ranks 1..5 → Σd² = 2 → ρ = 1 − 6·2/(5·24) = 0.9.
"""

import json
import math

import krippendorff
import numpy as np
import pytest

from agreement.core.scoring import score_task
from measures import metrics as m

ALICE = [1, 2, 3, 5, 4]
BOB = [0, 2, 3, 5, 4]
GOLD = {i: float(g) for i, g in enumerate([1, 2, 3, 4, 5], start=1)}
ANSWERS = {i: {"alice": a, "bob": b} for i, (a, b) in enumerate(zip(ALICE, BOB, strict=True), start=1)}


def test_human_spearman_of_mean_ratings_with_a_bonett_wright_ci_on_request() -> None:
    human = score_task("sts", ANSWERS, GOLD, spearman_variance="bonett_wright")["human"]
    assert human["main_metric"] == "spearman"
    assert human["main_score"] == pytest.approx(0.9)
    # Var(z) = (1 + 0.9²/2)/(5 − 3) → half-width 1.959964·√(1.405/2)
    half = 1.959964 * math.sqrt((1 + 0.81 / 2) / 2)
    assert (human["ci_low"], human["ci_high"]) == pytest.approx(
        (math.tanh(math.atanh(0.9) - half), math.tanh(math.atanh(0.9) + half)), abs=1e-5
    )
    assert human["ci_method"] == "fisher_z_bonett_wright"
    # Pearson of means (0.5,2,3,5,4) vs 1..5: dx = −2.4,−0.9,0.1,2.1,1.1; dy = −2,−1,0,1,2
    # Σdxdy = 4.8 + 0.9 + 0 + 2.1 + 2.2 = 10; Σdx² = 5.76 + .81 + .01 + 4.41 + 1.21 = 12.2; Σdy² = 10
    assert human["scores"]["pearson"] == pytest.approx(10 / math.sqrt(122))


def test_plain_fisher_variance_is_the_default_as_in_hume_table_8() -> None:
    human = score_task("sts", ANSWERS, GOLD)["human"]
    assert (human["ci_low"], human["ci_high"]) == pytest.approx(m.fisher_z_interval(0.9, 5))
    assert human["ci_method"] == "fisher_z"


def test_sts_agreement_is_pairwise_spearman_and_interval_alpha() -> None:
    report = score_task("sts", ANSWERS, GOLD)
    assert report["agreement"]["spearman_mean"] == pytest.approx(1.0)  # same ranks
    expected_alpha = krippendorff.alpha(np.array([ALICE, BOB], dtype=float), level_of_measurement="interval")
    assert report["agreement"]["krippendorff_alpha"] == pytest.approx(expected_alpha)
    assert report["agreement_bands"]["spearman_mean"] == "strong"
    assert report["flags"]["low_agreement"] is False


def test_disagreement_is_rating_spread_and_distance_to_gold_over_the_scale() -> None:
    rows = score_task("sts", ANSWERS, GOLD)["disagreement"]
    # pair 1: std(1, 0) = 0.5 → /5 = 0.1; |0.5 − 1|/5 = 0.1. Pairs 4, 5: spread 0, |mean − gold|/5 = 0.2
    assert rows[0] == {"item": 1, "disagreement": pytest.approx(0.1), "gold_disagreement": pytest.approx(0.1)}
    assert [r["item"] for r in rows] == [1, 4, 5, 2, 3]


def test_constant_ratings_leave_spearman_undefined_with_a_reason() -> None:
    answers = {i: {"alice": 3, "bob": 3} for i in GOLD}
    report = score_task("sts", answers, GOLD)
    assert report["human"]["main_score"] is None
    assert report["human"]["reason"] == "undefined: constant ratings"
    assert report["human"]["ci_low"] is None
    assert report["agreement"]["spearman_mean"] is None
    assert "constant" in report["agreement_notes"]["spearman_mean"]
    assert report["agreement"]["krippendorff_alpha"] is None
    assert report["flags"]["low_agreement"] is False
    json.dumps(report, allow_nan=False)
