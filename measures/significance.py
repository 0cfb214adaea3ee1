"""Paired significance of the human–model difference on the same items, against gold. Pure (no Django).

- labels (classification, pairwise): McNemar's exact test on who is right per item (statsmodels);
- correlations (STS): a paired bootstrap of Spearman(humans) − Spearman(model), items resampled together;
- Likert: a paired bootstrap of the difference of SAGE's score, mean over axes of 0.5·(Pearson r + 1) with
  gold, humans' mean rating against the model's similarity (items resampled together, every axis at once).
  Not a permutation of per-item errors: a similarity and a rating share no scale, so only the correlation
  the score is made of can be compared;
- rankings (reranking AP, graded nDCG@10) and clustering (V-measure per set): a paired permutation test
  (sign flips of the per-query or per-set differences, scipy.stats.permutation_test).
Which test a kind uses is its model evaluation's choice (kinds/<name>/evaluation.py `paired_test`). The
humans are their consensus (majority / mean), as the human score's protocol has it. Seeded: a report
gives the same p-value every time.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

SEED = 42
RESAMPLES = 2000


def mcnemar_exact(human_right: Sequence[bool], model_right: Sequence[bool]) -> dict[str, Any]:
    h, m = np.asarray(human_right, dtype=bool), np.asarray(model_right, dtype=bool)
    table = [[int((h & m).sum()), int((h & ~m).sum())], [int((~h & m).sum()), int((~h & ~m).sum())]]
    result = mcnemar(table, exact=True)
    return {"test": "McNemar exact", "p_value": float(result.pvalue), "n": len(h),
            "humans_only_right": table[0][1], "model_only_right": table[1][0]}


def paired_permutation(human: Sequence[float], model: Sequence[float], unit: str) -> dict[str, Any] | None:
    h, m = np.asarray(human, dtype=float), np.asarray(model, dtype=float)
    if len(h) < 2:
        return None
    result = stats.permutation_test((h, m), lambda x, y: np.mean(x - y), permutation_type="samples",
                                    n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
    return {"test": f"paired permutation over {unit}", "p_value": float(result.pvalue),
            "mean_difference": float(np.mean(h - m)), "n": len(h)}


def _row_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row pair (ties averaged), vectorised over the resamples; NaN for a constant row."""
    ra, rb = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    denominator = np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra * rb).sum(axis=1) / denominator


def paired_bootstrap_spearman(truth: Sequence[float], human: Sequence[float], model: Sequence[float]
                              ) -> dict[str, Any] | None:
    t, h, m = (np.asarray(v, dtype=float) for v in (truth, human, model))
    if len(t) < 4:
        return None
    observed = stats.spearmanr(t, h).statistic - stats.spearmanr(t, m).statistic
    idx = np.random.default_rng(SEED).integers(0, len(t), (RESAMPLES, len(t)))
    d = _row_spearman(t[idx], h[idx]) - _row_spearman(t[idx], m[idx])
    d = d[np.isfinite(d)]  # resamples where a side is constant have no ρ
    p = min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean())) if d.size else None
    return {"test": "paired bootstrap of the Spearman difference", "p_value": p,
            "difference": float(observed), "n": len(t)}


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))


def paired_bootstrap_likert(gold: dict[str, Sequence[float]], human: dict[str, Sequence[float]],
                            model: Sequence[float]) -> dict[str, Any] | None:
    """gold and human: axis -> one rating per item; model: one similarity per item (the same items)."""
    m = np.asarray(model, dtype=float)
    axes = sorted(gold)
    if len(m) < 4 or not axes:
        return None
    g = {a: np.asarray(gold[a], dtype=float) for a in axes}
    h = {a: np.asarray(human[a], dtype=float) for a in axes}

    def sage(truth: np.ndarray, pred: np.ndarray) -> np.ndarray:
        return 0.5 * (_row_pearson(truth, pred) + 1.0)

    observed = float(np.mean([sage(g[a][None], h[a][None])[0] - sage(g[a][None], m[None])[0] for a in axes]))
    idx = np.random.default_rng(SEED).integers(0, len(m), (RESAMPLES, len(m)))
    d = np.mean([sage(g[a][idx], h[a][idx]) - sage(g[a][idx], m[idx]) for a in axes], axis=0)
    d = d[np.isfinite(d)]  # resamples where a side is constant have no r
    p = min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean())) if d.size else None
    return {"test": "paired bootstrap of the SAGE Likert score difference", "p_value": p,
            "difference": observed if np.isfinite(observed) else None, "n": len(m), "axes": axes}


def ranking_scores(ids: Sequence[str], ranked: Sequence[str]) -> np.ndarray:
    position = {doc: n for n, doc in enumerate(ranked)}
    return np.array([-position[d] for d in ids], dtype=float)
