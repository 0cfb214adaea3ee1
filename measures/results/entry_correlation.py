"""Correlation between two entries over the subsets both have (HUME §4.4, Table 13), e.g. a human and an LLM."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from scipy import stats

from measures.results.subset_scores import SubsetKey, SubsetScore, index_scores


def entry_scores(
    scores: Iterable[SubsetScore], name: str, *, languages: Collection[str] | None = None
) -> dict[SubsetKey, float]:
    """One entry's scores by (task, language), e.g. to correlate a human with an LLM."""
    return dict(index_scores(scores, languages).scores.get(name, {}))


def spearman(a: Mapping[Any, float], b: Mapping[Any, float]) -> dict[str, Any]:
    """Spearman ρ and two-sided p over the keys both vectors share (HUME: 19 task-language pairs).

    ρ and p are None when fewer than 3 shared keys or a constant vector make them undefined.
    """
    keys = sorted(set(a) & set(b), key=repr)
    left = [a[key] for key in keys]
    right = [b[key] for key in keys]
    if len(keys) < 3 or len(set(left)) < 2 or len(set(right)) < 2:
        return {"rho": None, "p_value": None, "n": len(keys)}
    result = stats.spearmanr(left, right)
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": len(keys)}
