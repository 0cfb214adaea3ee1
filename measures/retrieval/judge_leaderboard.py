"""Comparing systems across judges and datasets, as the "Beyond Binary" study reports them. Pure: no Django.

- Two-stage average: first each judge's curves are averaged over datasets, then those judge averages over
  judges (the study's "Average" pseudo-judge), so a judge who scored more datasets weighs no more.
- Rank shift: a system's place on two leaderboards (e.g. binary qrels vs graded judges) and Kendall's τ-b
  between the two orders (SciPy), over the systems both rank.
- Delta against a chosen baseline system, and a paired Student t-test over per-query scores (the test
  ranx uses by default) to say whether two rankings differ.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats


def two_stage_average(curves: Mapping[str, Mapping[str, np.ndarray]]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """{judge: {dataset: curve}} → ({judge: mean curve over its datasets}, mean of those over judges)."""
    per_judge = {judge: np.mean([np.asarray(c, dtype=float) for c in by_dataset.values()], axis=0)
                 for judge, by_dataset in curves.items() if by_dataset}
    if not per_judge:
        raise ValueError("no curves to average")
    return per_judge, np.mean(list(per_judge.values()), axis=0)


def places(scores: Mapping[str, float]) -> dict[str, int]:
    """1-based places, best score first (ties share the better place, as "1, 2, 2, 4")."""
    ordered = sorted(scores.values(), reverse=True)
    return {system: ordered.index(score) + 1 for system, score in scores.items()}


@dataclass(frozen=True)
class RankShift:
    tau: float  # NaN when fewer than two systems are common or one side is constant
    p_value: float
    systems: int
    moves: dict[str, tuple[int, int]]  # system: (place before, place after), among the common systems


def rank_shift(before: Mapping[str, float], after: Mapping[str, float]) -> RankShift:
    common = sorted(set(before) & set(after))
    a, b = [before[s] for s in common], [after[s] for s in common]
    if len(common) < 2:
        return RankShift(float("nan"), float("nan"), len(common), {})
    result = stats.kendalltau(a, b)
    first, second = places(dict(zip(common, a, strict=True))), places(dict(zip(common, b, strict=True)))
    return RankShift(float(result.statistic), float(result.pvalue), len(common),
                     {s: (first[s], second[s]) for s in common})


def deltas(scores: Mapping[str, float], baseline: str) -> dict[str, float]:
    if baseline not in scores:
        raise KeyError(f"the baseline {baseline!r} has no score")
    return {system: score - scores[baseline] for system, score in scores.items()}


def paired_t_test(a: Mapping[int, float], b: Mapping[int, float]) -> tuple[float, float, int]:
    """(t, two-sided p, queries) of a paired t-test over the queries both rankings were scored on."""
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return float("nan"), float("nan"), len(common)
    result = stats.ttest_rel([a[q] for q in common], [b[q] for q in common])
    return float(result.statistic), float(result.pvalue), len(common)
