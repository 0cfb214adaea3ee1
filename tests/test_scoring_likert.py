"""score_task for Likert (1–7 per axis): mean per item and axis, Pearson per axis vs gold and
SAGE's 0.5·(r + 1), ordinal Krippendorff's α per axis (`krippendorff_alpha_<axis>`)."""

import math

import krippendorff
import numpy as np
import pytest

from agreement.core.scoring import score_task

GOLD = {
    1: {"overall": 2, "coherence": 3},
    2: {"overall": 4, "coherence": 4},
    3: {"overall": 6, "coherence": 5},
    4: {"overall": 7, "coherence": 6},
}
ALICE = {"overall": [2, 4, 6, 7], "coherence": [3, 5, 4, 6]}
BOB = {"overall": [3, 4, 6, 7], "coherence": [3, 5, 4, 6]}
ANSWERS = {
    i: {name: {axis: r[axis][i - 1] for axis in r} for name, r in (("alice", ALICE), ("bob", BOB))} for i in GOLD
}


def pearson(x: list[float], y: list[float]) -> float:
    """Textbook r = Σdxdy/√(ΣdxΣdy²), written out as the reference."""
    dx, dy = np.subtract(x, np.mean(x)), np.subtract(y, np.mean(y))
    return float((dx * dy).sum() / math.sqrt((dx**2).sum() * (dy**2).sum()))


def test_pearson_per_axis_of_mean_ratings_and_sage() -> None:
    human = score_task("likert", ANSWERS, GOLD)["human"]
    r_overall = pearson([2.5, 4, 6, 7], [2, 4, 6, 7])
    # by hand: dx = −1.5, 0.5, −0.5, 1.5; dy = −1.5, −0.5, 0.5, 1.5 → Σdxdy = 4, Σdx² = Σdy² = 5 → 0.8
    r_coherence = pearson([3, 5, 4, 6], [3, 4, 5, 6])
    assert r_coherence == pytest.approx(0.8)
    scores = human["scores"]
    assert scores["pearson_overall"] == pytest.approx(r_overall)
    assert scores["pearson_coherence"] == pytest.approx(0.8)
    assert scores["sage_coherence"] == pytest.approx(0.9)
    assert human["main_metric"] == "pearson_mean"
    assert human["main_score"] == pytest.approx((r_overall + 0.8) / 2)
    # CI: Fisher z around the axes' mean z with Var = 1/(n − 3), n = 4
    z = (math.atanh(r_overall) + math.atanh(0.8)) / 2
    assert (human["ci_low"], human["ci_high"]) == pytest.approx((math.tanh(z - 1.959964), math.tanh(z + 1.959964)),
                                                                abs=1e-5)


def test_ordinal_alpha_per_axis_against_the_krippendorff_package() -> None:
    report = score_task("likert", ANSWERS, GOLD)
    expected = krippendorff.alpha(np.array([ALICE["overall"], BOB["overall"]], dtype=float),
                                  level_of_measurement="ordinal", value_domain=list(range(1, 8)))
    assert report["agreement"]["krippendorff_alpha_overall"] == pytest.approx(expected)
    assert report["agreement"]["krippendorff_alpha_coherence"] == pytest.approx(1.0)
    assert set(report["agreement"]) == {f"{name}_{axis}" for axis in ("overall", "coherence") for name in
                                        ("krippendorff_alpha", "spearman_mean", "pearson_mean", "kendall_mean",
                                         "gwet_ac2_ordinal", "gwet_ac2_linear", "gwet_ac2_quadratic")}
    assert report["flags"]["low_agreement"] is False


def test_axes_can_be_given_explicitly() -> None:
    report = score_task("likert", ANSWERS, GOLD, axes=["coherence"])
    assert set(report["agreement"]) == {"krippendorff_alpha_coherence", "spearman_mean_coherence",
                                        "pearson_mean_coherence", "kendall_mean_coherence",
                                        "gwet_ac2_ordinal_coherence", "gwet_ac2_linear_coherence",
                                        "gwet_ac2_quadratic_coherence"}
    assert report["human"]["main_score"] == pytest.approx(0.8)
