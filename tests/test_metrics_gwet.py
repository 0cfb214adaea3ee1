"""Gwet's AC1 and AC2 (measures/gwet.py) against the numbers Gwet's R package irrCAC 1.0 publishes.

Sources (only the published numbers are used; irrCAC ships no licence file, so none of its code):
- irrCAC README, "Computing agreement coefficients from raw ratings": `gwet.ac1.raw(cac.raw4raters)` gives
  AC1 0.77544, se 0.14295, 95% CI (0.461, 1), pa 0.8181818, pe 0.1903212. The data, 12 units × 4 raters on
  categories 1–5 with missing ratings, is irrCAC's inst/extdata/cac.raw4raters.csv (also printed in the
  README). (irrCAC's other two-rater dataset, cac.ben.gerry, has no published AC1 there: the 0.77544 example
  is cac.raw4raters.)
- irrCAC vignette "Weighted Chance-corrected Agreement Coefficients" (weighting.Rmd / weighting.html):
  `gwet.ac1.raw(cac.raw4raters, weights = "quadratic")` gives AC2 0.914, se 0.10396, CI (0.685, 1),
  pa 0.9753788, pe 0.7137044; `gwet.ac1.dist(distrib.6raters, weights = quadratic.weights(1:5))` gives
  AC2 0.4837438, se 0.1058227, CI (0.257, 0.711), pe 0.7180556; and its weight matrices of 1:3.
- irrCAC README, distribution of raters: `gwet.ac1.dist(distrib.6raters)` gives AC1 0.4448007,
  se 0.08418757, CI (0.264, 0.625), pa 0.5511111, pe 0.1914815.
"""

from __future__ import annotations

import numpy as np
import pytest

from measures import gwet
from measures import metrics as m
from measures.metric_base import Undefined

CAC_RAW4RATERS = [  # units 1..12, raters 1..4; None = not rated
    [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, None, 3, None],
]
DISTRIB_6RATERS = np.array([  # 15 patients × 5 diagnoses: raters per category
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
])


def raw4raters_table() -> np.ndarray:
    codes, categories = m.encode_labels([v for row in CAC_RAW4RATERS for v in row], range(1, 6))
    assert categories == [1, 2, 3, 4, 5]
    return m.count_table(codes.reshape(12, 4), 5)


def test_ac1_reproduces_irrcac_cac_raw4raters() -> None:
    result = gwet.gwet_ac(raw4raters_table())
    assert result.coefficient == pytest.approx(0.77544, abs=5e-6)
    assert result.standard_error == pytest.approx(0.14295, abs=5e-6)
    assert result.ci_low == pytest.approx(0.46081, abs=5e-6)  # 0.77544 − t(11) · 0.14295
    assert result.ci_high == 1.0
    assert result.observed == pytest.approx(0.8181818, abs=5e-8)
    assert result.chance == pytest.approx(0.1903212, abs=5e-8)
    assert result.n_items == 12


def test_ac2_quadratic_reproduces_irrcac_weighted_cac_raw4raters() -> None:
    w = gwet.weights([1, 2, 3, 4, 5], "quadratic")
    result = gwet.gwet_ac(raw4raters_table(), w, weighting="quadratic")
    assert result.coefficient == pytest.approx(0.914, abs=5e-4)
    assert result.standard_error == pytest.approx(0.10396, abs=5e-6)
    assert (round(result.ci_low, 3), result.ci_high) == (0.685, 1.0)
    assert result.observed == pytest.approx(0.9753788, abs=5e-8)
    assert result.chance == pytest.approx(0.7137044, abs=5e-8)


def test_ac1_and_ac2_reproduce_irrcac_distrib_6raters() -> None:
    ac1 = gwet.gwet_ac(DISTRIB_6RATERS)
    assert ac1.coefficient == pytest.approx(0.4448007, abs=5e-8)
    assert ac1.standard_error == pytest.approx(0.08418757, abs=5e-9)
    assert (round(ac1.ci_low, 3), round(ac1.ci_high, 3)) == (0.264, 0.625)
    assert ac1.chance == pytest.approx(0.1914815, abs=5e-8)
    ac2 = gwet.gwet_ac(DISTRIB_6RATERS, gwet.weights(range(1, 6), "quadratic"), weighting="quadratic")
    assert ac2.coefficient == pytest.approx(0.4837438, abs=5e-8)
    assert ac2.standard_error == pytest.approx(0.1058227, abs=5e-8)
    assert (round(ac2.ci_low, 3), round(ac2.ci_high, 3)) == (0.257, 0.711)
    assert ac2.chance == pytest.approx(0.7180556, abs=5e-8)


def test_weights_match_irrcac_weight_matrices_of_three_categories() -> None:
    np.testing.assert_allclose(gwet.weights([1, 2, 3], "identity"), np.eye(3))
    np.testing.assert_allclose(gwet.weights([1, 2, 3], "linear"), [[1, .5, 0], [.5, 1, .5], [0, .5, 1]])
    np.testing.assert_allclose(gwet.weights([1, 2, 3], "quadratic"), [[1, .75, 0], [.75, 1, .75], [0, .75, 1]])
    np.testing.assert_allclose(gwet.weights([1, 2, 3], "ordinal"),
                               [[1, 2 / 3, 0], [2 / 3, 1, 2 / 3], [0, 2 / 3, 1]])


def test_ac1_of_perfect_agreement_is_one_and_undefined_cases_say_why() -> None:
    assert gwet.gwet_ac([[2, 0], [0, 2], [2, 0]]).coefficient == pytest.approx(1.0)
    with pytest.raises(Undefined, match="no item has two ratings"):
        gwet.gwet_ac([[1, 0], [0, 1]])
    with pytest.raises(Undefined, match="single category"):
        gwet.gwet_ac([[2], [3]])


def raw4raters_answers(wrap=lambda v: v) -> dict[int, dict[str, object]]:
    return {unit: {f"rater{r}": wrap(v) for r, v in enumerate(row, 1) if v is not None}
            for unit, row in enumerate(CAC_RAW4RATERS, 1)}


def test_a_classification_report_gives_irrcacs_ac1_with_its_interval() -> None:
    from agreement.core.scoring import score_task

    answers = raw4raters_answers(str)
    report = score_task("classification", answers, {unit: "1" for unit in answers}, labels=list("12345"))
    assert report["agreement"]["gwet_ac1"] == pytest.approx(0.77544, abs=5e-6)
    interval = report["agreement_intervals"]["gwet_ac1"]
    assert (interval["standard_error"], interval["ci_low"], interval["ci_high"]) == pytest.approx(
        (0.14295, 0.46081, 1.0), abs=5e-6)


def test_an_sts_and_a_likert_report_on_a_1_to_5_scale_give_irrcacs_quadratic_ac2() -> None:
    from agreement.core.scoring import score_task

    sts = score_task("sts", raw4raters_answers(float), {unit: 3.0 for unit in range(1, 13)}, scale=(1, 5))
    assert sts["agreement"]["gwet_ac2_quadratic"] == pytest.approx(0.914, abs=5e-4)
    assert sts["agreement_intervals"]["gwet_ac2_quadratic"]["standard_error"] == pytest.approx(0.10396, abs=5e-6)
    assert sts["agreement_intervals"]["gwet_ac2_quadratic"]["weights"] == "quadratic"
    gold = {unit: {"overall": 3} for unit in range(1, 13)}
    likert = score_task("likert", raw4raters_answers(lambda v: {"overall": v}), gold, scale=(1, 5), axes=["overall"])
    assert likert["agreement"]["gwet_ac2_quadratic_overall"] == pytest.approx(0.914, abs=5e-4)
