"""The alternative-annotator test: may an LLM judge replace a human annotator? (pure: numpy and SciPy).

After N. Calderon, R. Reichart, R. Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs", ACL 2025, arXiv 2501.10970 (§3, Algorithm 1), and the authors'
reference code (the public repository nitaytech/AltTest, `alt_test`), which this module reproduces:

- only items with at least `min_humans_per_instance` (2) human answers and a judge answer count;
- leave one annotator j out: on each of j's items, score the judge's answer and j's answer by how well each
  aligns with the remaining annotators (`accuracy`: the share of them it equals; `neg_rmse`: minus the root mean
  squared difference to them); W_f = 1 when the judge scores ≥ j, W_h = 1 when j scores ≥ the judge;
- annotators with fewer than `min_instances_per_human` (30) such items are left out (and named);
- ρ_j = mean W_f, the judge's advantage probability over j; a one-sided one-sample t-test of d = W_h − W_f
  against ε (H0: mean d ≥ ε, the judge loses by more than the cost-benefit margin ε);
- the p-values go through the Benjamini–Yekutieli procedure at q = 0.05; the winning rate ω is the share of the
  tested annotators whose null is rejected, and the judge passes when ω ≥ 0.5. The mean of the ρ_j, the
  average advantage probability, compares judges (higher is better).

One departure, for a degenerate case the reference leaves undefined: when every d on an annotator's items is
the same (the t statistic is 0/0, SciPy's p-value NaN), the p-value is 0 when that constant is below ε and 1
otherwise, instead of NaN (never rejected).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import ttest_1samp

Scoring = Callable[[Any, Sequence[Any]], float]


def accuracy(prediction: Any, annotations: Sequence[Any]) -> float:
    """The share of the other annotators' answers equal to `prediction`."""
    return float(np.mean([prediction == annotation for annotation in annotations]))


def neg_rmse(prediction: float, annotations: Sequence[float]) -> float:
    """Minus the root mean squared difference between `prediction` and the other annotators' answers."""
    return -float(np.sqrt(np.mean([(prediction - annotation) ** 2 for annotation in annotations])))


SCORINGS: dict[str, Scoring] = {"accuracy": accuracy, "neg_rmse": neg_rmse}


def benjamini_yekutieli(p_values: Sequence[float], q: float) -> np.ndarray:
    """Which hypotheses the Benjamini–Yekutieli step-up procedure rejects at FDR q (valid under any dependence):
    the largest i with p_(i) ≤ i/m · q / H_m, H_m = Σ 1/k; every p ≤ p_(i) is rejected. NaN is never rejected."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    limits = np.arange(1, m + 1) / m * q / harmonic
    passing = np.flatnonzero(p[order] <= limits)
    if passing.size:
        rejected[order[: passing[-1] + 1]] = True
    return rejected


def one_sided_p_value(differences: np.ndarray, epsilon: float) -> float:
    """p-value of H0: mean(d) ≥ ε against mean(d) < ε (one-sample t-test); a constant d gets 0 or 1."""
    if np.ptp(differences) == 0:
        return 0.0 if differences[0] < epsilon else 1.0
    return float(ttest_1samp(differences, epsilon, alternative="less").pvalue)


@dataclass(frozen=True)
class AnnotatorResult:
    """The judge against one left-out annotator."""

    annotator: Hashable
    n_items: int
    advantage_probability: float  # ρ_j: share of items where the judge aligns at least as well
    human_probability: float  # share where the annotator aligns at least as well
    p_value: float
    judge_wins: bool  # the null rejected after the Benjamini–Yekutieli correction


@dataclass(frozen=True)
class AltTestResult:
    epsilon: float
    q: float
    annotators: tuple[AnnotatorResult, ...]
    left_out: dict[Hashable, int]  # annotators with too few items, and how many they had
    n_items: int  # items with enough human answers and a judge answer

    @property
    def winning_rate(self) -> float | None:
        """ω: the share of tested annotators the judge wins against (None: no annotator could be tested)."""
        if not self.annotators:
            return None
        return sum(result.judge_wins for result in self.annotators) / len(self.annotators)

    @property
    def advantage_probability(self) -> float | None:
        """The mean of the ρ_j over the tested annotators."""
        if not self.annotators:
            return None
        return float(np.mean([result.advantage_probability for result in self.annotators]))

    @property
    def passed(self) -> bool:
        return self.winning_rate is not None and self.winning_rate >= 0.5


def alt_test(judge: Mapping[Hashable, Any], humans: Mapping[Hashable, Mapping[Hashable, Any]],
             scoring: str | Scoring = "accuracy", epsilon: float = 0.2, q: float = 0.05,
             min_humans_per_instance: int = 2, min_instances_per_human: int = 30) -> AltTestResult:
    """Run the test for one judge: `judge` maps item → answer, `humans` annotator → item → answer."""
    score = SCORINGS[scoring] if isinstance(scoring, str) else scoring
    annotators_of: dict[Hashable, list[Hashable]] = {}
    for annotator, answers in humans.items():
        for item in answers:
            annotators_of.setdefault(item, []).append(annotator)
    kept = {item for item, names in annotators_of.items()
            if len(names) >= min_humans_per_instance and item in judge}
    results, p_values, left_out = [], [], {}
    for annotator, answers in humans.items():
        items = [item for item in answers if item in kept]
        if len(items) < min_instances_per_human:
            left_out[annotator] = len(items)
            continue
        judge_wins, human_wins = np.zeros(len(items)), np.zeros(len(items))
        for position, item in enumerate(items):
            others = [humans[other][item] for other in annotators_of[item] if other != annotator]
            human_score, judge_score = score(answers[item], others), score(judge[item], others)
            judge_wins[position] = judge_score >= human_score
            human_wins[position] = human_score >= judge_score
        p_values.append(one_sided_p_value(human_wins - judge_wins, epsilon))
        results.append((annotator, len(items), float(judge_wins.mean()), float(human_wins.mean())))
    rejected = benjamini_yekutieli(p_values, q)
    return AltTestResult(
        epsilon, q,
        tuple(AnnotatorResult(name, n, rho, rho_h, p, bool(win))
              for (name, n, rho, rho_h), p, win in zip(results, p_values, rejected, strict=True)),
        left_out, len(kept))
