"""The alternative-annotator test (measures/escalation/alternative_annotator_test.py; "The Alternative Annotator
Test for LLM-as-a-Judge", arXiv 2501.10970, Algorithm 1): a hand-worked example, the Benjamini–Yekutieli step against
statsmodels, and the edge cases. The match with the authors' published example (their notebook's 52 verdicts)
is checked by bench/bench_alt_test_reference.py on a clone of their repository (docs/escalation.md)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ttest_1samp
from statsmodels.stats.multitest import multipletests

from measures.escalation.alternative_annotator_test import (
    accuracy,
    alt_test,
    benjamini_yekutieli,
    neg_rmse,
    one_sided_p_value,
)


def test_accuracy_and_neg_rmse_score_one_answer_against_the_others() -> None:
    assert accuracy("a", ["a", "b", "a", "c"]) == 0.5
    assert neg_rmse(3.0, [1.0, 5.0]) == -2.0  # sqrt((4 + 4) / 2)


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_yekutieli_rejects_what_statsmodels_rejects(seed: int) -> None:
    p = np.random.default_rng(seed).uniform(0, 0.05, size=12) ** 1.5
    assert benjamini_yekutieli(p, 0.05).tolist() == multipletests(p, alpha=0.05, method="fdr_by")[0].tolist()


def test_a_nan_p_value_is_never_rejected() -> None:
    assert benjamini_yekutieli([np.nan, 0.0001], 0.05).tolist() == [False, True]


def test_a_hand_worked_example_with_three_annotators() -> None:
    # Four items, annotators h1, h2, h3, judge J (min 4 items per annotator for the example).
    #   item  h1 h2 h3  J
    #   1     a  a  a   a
    #   2     a  b  b   b
    #   3     b  b  a   b
    #   4     a  a  b   a
    # Leaving h1 out (others h2, h3): item 1 J 1.0 vs h1 1.0 (both win); 2: J 1.0 vs 0.0; 3: J 0.5 vs 0.5; 4: J 0.5
    # vs 0.5. W_f = 1,1,1,1 → ρ = 1; W_h = 1,0,1,1 → d = 0,−1,0,0.
    # Leaving h2 out (others h1, h3): 1: 1 vs 1; 2: J 0.5 vs 0.5; 3: J 0.5 vs 0.5; 4: J 0.5 vs 0.5 → d = 0,0,0,0.
    # Leaving h3 out (others h1, h2): 1: 1 vs 1; 2: J 0.5 vs 0.5; 3: J 1 vs 0; 4: J 1 vs 0 → d = 0,0,−1,−1.
    humans = {"h1": {1: "a", 2: "a", 3: "b", 4: "a"}, "h2": {1: "a", 2: "b", 3: "b", 4: "a"},
              "h3": {1: "a", 2: "b", 3: "a", 4: "b"}}
    judge = {1: "a", 2: "b", 3: "b", 4: "a"}
    result = alt_test(judge, humans, "accuracy", epsilon=0.2, min_instances_per_human=4)
    assert [r.advantage_probability for r in result.annotators] == [1.0, 1.0, 1.0]
    assert [r.human_probability for r in result.annotators] == [0.75, 1.0, 0.5]
    expected = [ttest_1samp([0, -1, 0, 0], 0.2, alternative="less").pvalue, 0.0,
                ttest_1samp([0, 0, -1, -1], 0.2, alternative="less").pvalue]
    assert [r.p_value for r in result.annotators] == pytest.approx(expected)
    # h1: mean d = −0.25, sd 0.5, t = (−0.25 − 0.2) / (0.5 / 2) = −1.8 on 3 df, p = 0.0848.
    # h3: mean d = −0.5, sd 0.5774, t = −0.7 / 0.2887 = −2.4249, p = 0.0469.
    # h2: d constant 0 < ε, p = 0 (the one departure from the reference code, whose p is NaN there).
    # BY at q = 0.05, m = 3, H_3 = 11/6: limits 0.00909, 0.01818, 0.02727 for p sorted 0, 0.0469, 0.0848: only h2.
    assert expected[0] == pytest.approx(0.0848, abs=1e-4) and expected[2] == pytest.approx(0.0469, abs=1e-4)
    assert [r.judge_wins for r in result.annotators] == [False, True, False]
    assert result.winning_rate == pytest.approx(1 / 3) and not result.passed
    assert result.advantage_probability == 1.0 and result.n_items == 4


def test_one_sided_p_value_of_a_constant_difference() -> None:
    assert one_sided_p_value(np.array([0.0, 0.0]), 0.1) == 0.0
    assert one_sided_p_value(np.array([1.0, 1.0]), 0.1) == 1.0


def simulated(seed: int, n_items: int, judge_noise: float, human_noise: float = 0.3) -> tuple[dict, dict]:
    """Four categories, five annotators who keep the true label with probability 1 − noise (else a uniform
    one), as in the authors' simulation (arXiv 2501.10970, Appendix C)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_items)

    def noisy(noise: float) -> np.ndarray:
        return np.where(rng.uniform(size=n_items) < noise, rng.integers(0, 4, n_items), truth)

    humans = {f"h{j}": dict(enumerate(noisy(human_noise).tolist())) for j in range(5)}
    return dict(enumerate(noisy(judge_noise).tolist())), humans


def test_a_judge_as_good_as_the_humans_passes_and_a_poor_one_fails() -> None:
    good, humans = simulated(1, 150, judge_noise=0.05)
    poor, _ = simulated(1, 150, judge_noise=0.9)
    assert alt_test(good, humans, epsilon=0.15).passed
    result = alt_test(poor, humans, epsilon=0.15)
    assert not result.passed and result.winning_rate == 0.0 and result.advantage_probability < 0.5


def test_annotators_with_too_few_items_are_left_out_and_counted() -> None:
    judge, humans = simulated(2, 40, judge_noise=0.1)
    humans["h4"] = {item: label for item, label in humans["h4"].items() if item < 20}
    result = alt_test(judge, humans)
    assert result.left_out == {"h4": 20} and len(result.annotators) == 4


def test_items_the_judge_did_not_answer_or_with_one_human_do_not_count() -> None:
    judge, humans = simulated(3, 50, judge_noise=0.1)
    del judge[0]
    for name in ("h1", "h2", "h3", "h4"):
        del humans[name][1]
    assert alt_test(judge, humans).n_items == 48
    assert alt_test({}, humans).winning_rate is None
