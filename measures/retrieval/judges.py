"""Agreement between judges (LLM or human) who scored the same pairs, and each judge's score distribution.

Pure: {annotator: {(query, doc): score}} in, numbers out. Pearson and Spearman over the pairs two annotators
both scored (SciPy); Krippendorff's α (interval) over every annotator (the krippendorff package, missing
scores allowed). Fewer than three common pairs, or a constant side, gives None: undefined, not zero.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
from scipy import stats

Scores = Mapping[str, Mapping[Hashable, float]]


def correlation(a: Mapping[Hashable, float], b: Mapping[Hashable, float]) -> dict[str, Any]:
    common = sorted(set(a) & set(b), key=repr)
    x, y = np.array([a[p] for p in common], dtype=float), np.array([b[p] for p in common], dtype=float)
    defined = len(common) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0
    return {"pairs": len(common),
            "pearson": float(stats.pearsonr(x, y).statistic) if defined else None,
            "spearman": float(stats.spearmanr(x, y).statistic) if defined else None}


def pairwise(scores: Scores) -> list[dict[str, Any]]:
    return [{"a": a, "b": b, **correlation(scores[a], scores[b])} for a, b in combinations(sorted(scores), 2)]


def interval_alpha(scores: Scores) -> float | None:
    units = sorted({p for by_pair in scores.values() for p in by_pair}, key=repr)
    if len(scores) < 2 or len(units) < 2:
        return None
    data = np.array([[scores[name].get(u, np.nan) for u in units] for name in sorted(scores)], dtype=float)
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


def distribution(scores: Mapping[Hashable, float], lo: float = 0.0, hi: float = 10.0) -> list[int]:
    """Counts of scores in the unit-wide bins [0, 1), [1, 2), …, [9, 10] of the 0–10 scale."""
    counts, _ = np.histogram(list(scores.values()), bins=int(hi - lo), range=(lo, hi))
    return [int(c) for c in counts]


def summary(scores: Scores) -> dict[str, Any]:
    return {"pairwise": pairwise(scores), "alpha_interval": interval_alpha(scores),
            "distributions": {name: distribution(by_pair) for name, by_pair in sorted(scores.items())}}
