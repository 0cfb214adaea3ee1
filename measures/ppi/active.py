"""Active sampling (no Django): label the items where the judge is most likely wrong more often, and weigh each
label by the inverse of its probability so the estimate stays unbiased ("Active Statistical Inference",
Zrnic & Candès, arXiv:2403.03208, the uniform mix of its sampling rule).

A batch is drawn as m independent draws *with replacement* from the whole pool, item i with probability

    q_i = (1 − τ)·u_i/Σu + τ/M

u_i the judge's expected error on the item (here: the spread of several judges' answers), τ the uniform share
that bounds every weight by 1/τ. A draw that hits an item people already labelled reuses its label; the new
items go into the batch in the order they were first drawn. Together with the labels drawn uniformly before
(n_u of them), the labelled draws are a sample from the mixture p_i = (n_u/M + Σ_b m_b·q_b,i)/(n_u + Σ_b m_b),
so each draw gets the weight 1/(M·p_i) and the judge's values on *all* M items serve as the unlabelled part
(the unlabelled remainder is no longer a uniform sample once labels were drawn unevenly). The weighted PPI++
estimate is then ppi-python's with `w` (measures/ppi/estimates.py). A batch labelled only in part counts the
draws up to the first one whose item has no label yet: a prefix of independent draws is itself one.

**Confidence-driven draws** take u_i from one judge's own confidence instead ("Can Unconfident LLM Annotations Be
Used for Confident Conclusions?", Gligorić, Zrnic, Lee, Candès & Jurafsky, arXiv:2408.15204, §3): the judge's
squared error (y − ŷ)² on the labelled items is regressed on its confidence, and u_i = √(predicted squared
error) at the item's confidence, mixed with the uniform share τ as the paper's safeguard. The authors' code
(confidence-driven-inference, `code/bias.ipynb`) fits that regression with a gradient-boosted tree; here it is
an isotonic regression (error never rising with confidence), which needs no further library and cannot
invent a bump. A second safeguard decides whether to use it at all: when the confidence does not go with a
smaller error on the labelled items (one-sided Spearman test at 5%), the draw is uniform (docs/ppi.md,
"Confidence-driven sampling").
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats
from scipy.optimize import isotonic_regression

DEFAULT_UNIFORM_SHARE = 0.2  # τ: every weight at most 5× the uniform one
CONFIDENCE_UNIFORM_SHARE = 0.1  # τ of confidence-driven draws, as the authors' code (`tau = 0.1`)
MIN_CONFIDENCE_LABELS = 30  # labelled items with a confidence before the error can be regressed on it
CONFIDENCE_TEST_LEVEL = 0.05  # one-sided Spearman test that higher confidence goes with a smaller error


def draw_probabilities(uncertainty: np.ndarray, uniform_share: float = DEFAULT_UNIFORM_SHARE) -> np.ndarray:
    """q over the pool: (1 − τ)·u/Σu + τ/M; uniform when every u is 0."""
    u = np.asarray(uncertainty, dtype=float)
    if u.ndim != 1 or u.size == 0 or not np.all(np.isfinite(u)) or np.any(u < 0):
        raise ValueError("uncertainty: expected one finite, non-negative number per item")
    if not 0 < uniform_share <= 1:
        raise ValueError(f"uniform share must be in (0, 1], got {uniform_share!r}")
    uniform = np.full(u.size, 1 / u.size)
    if u.sum() == 0:
        return uniform
    return (1 - uniform_share) * u / u.sum() + uniform_share * uniform


def draw_until_new(q: np.ndarray, labelled: np.ndarray, n_new: int, rng: np.random.Generator) -> list[int]:
    """Independent draws from q until `n_new` distinct unlabelled items were drawn; returns every draw (row
    indices, repeats included), in order."""
    candidates = int((~labelled).sum())
    if n_new > candidates:
        raise ValueError(f"{n_new} new items asked for, but only {candidates} items have no label")
    draws: list[int] = []
    new: set[int] = set()
    while len(new) < n_new:
        for row in rng.choice(q.size, size=max(64, 2 * (n_new - len(new))), p=q):
            draws.append(int(row))
            if not labelled[row]:
                new.add(int(row))
                if len(new) == n_new:
                    break
    return draws


def usable_prefix(draws: Sequence[int], labelled: np.ndarray) -> list[int]:
    """The draws up to (not including) the first whose item has no label yet."""
    for position, row in enumerate(draws):
        if not labelled[row]:
            return list(draws[:position])
    return list(draws)


def pooled_draws(n_items: int, uniform_rows: Sequence[int],
                 phases: Sequence[tuple[np.ndarray, Sequence[int]]]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, weights) of every labelled draw: the uniform phase's items once each, then each active phase's
    draws (repeats kept); weight 1/(M·p_i) with p the mixture of the phases' draw distributions."""
    n_uniform = len(uniform_rows)
    total = n_uniform + sum(len(draws) for _q, draws in phases)
    if total == 0:
        return np.array([], dtype=int), np.array([])
    mixture = np.full(n_items, n_uniform / n_items)
    for q, draws in phases:
        mixture += len(draws) * q
    mixture /= total
    rows = np.concatenate([np.asarray(uniform_rows, dtype=int)]
                          + [np.asarray(draws, dtype=int) for _q, draws in phases])
    return rows, 1 / (n_items * mixture[rows])


def predicted_squared_error(confidence: np.ndarray, squared_error: np.ndarray,
                            confidence_everywhere: np.ndarray) -> np.ndarray:
    """The judge's squared error predicted from its confidence: the isotonic (non-increasing in confidence)
    least-squares fit to the labelled items' squared errors, equal confidences pooled, read off at every item's
    confidence (interpolated between the labelled confidences, flat beyond them). An item without a confidence
    (NaN) gets the labelled items' mean squared error."""
    c, e = np.asarray(confidence, dtype=float), np.asarray(squared_error, dtype=float)
    if c.shape != e.shape or c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)) or not np.all(np.isfinite(e)):
        raise ValueError("confidence and squared error: one finite number each per labelled item")
    levels, position, counts = np.unique(c, return_inverse=True, return_counts=True)
    means = np.bincount(position, weights=e) / counts
    # isotonic_regression fits an increasing sequence: go down the confidence levels, so the error rises.
    fitted = isotonic_regression(means[::-1], weights=counts[::-1].astype(float), increasing=True).x[::-1]
    everywhere = np.asarray(confidence_everywhere, dtype=float)
    known = np.isfinite(everywhere)
    prediction = np.full(everywhere.shape, float(e.mean()))
    prediction[known] = np.interp(everywhere[known], levels, fitted)
    return np.maximum(prediction, 0.0)


def confidence_tells_error(confidence: np.ndarray, squared_error: np.ndarray,
                           level: float = CONFIDENCE_TEST_LEVEL) -> tuple[bool, float | None]:
    """(whether, p): does a higher confidence go with a smaller squared error on the labelled items? One-sided
    Spearman test; p None (and False) when either side is constant."""
    c, e = np.asarray(confidence, dtype=float), np.asarray(squared_error, dtype=float)
    if c.size < 3 or np.ptp(c) == 0 or np.ptp(e) == 0:
        return False, None
    result = stats.spearmanr(c, e, alternative="less")
    p = float(result.pvalue)
    return bool(p < level), p


def confidence_probabilities(confidence: np.ndarray, squared_error: np.ndarray, confidence_everywhere: np.ndarray,
                             uniform_share: float = CONFIDENCE_UNIFORM_SHARE) -> tuple[np.ndarray, str]:
    """(q, note): draw probabilities over the pool from the judge's confidence (u = √ predicted squared error,
    mixed with τ uniform), or uniform when the confidence does not tell the error on the labelled items; the note
    says which, with the test's p-value."""
    if np.asarray(confidence).size < MIN_CONFIDENCE_LABELS:
        raise ValueError(f"{np.asarray(confidence).size} labelled items carry the judge's confidence; at least "
                         f"{MIN_CONFIDENCE_LABELS} are needed to learn how it predicts the judge's error")
    size = np.asarray(confidence_everywhere).size
    tells, p = confidence_tells_error(confidence, squared_error)
    if not tells:
        why = "constant" if p is None else f"p = {p:.3g}"
        return np.full(size, 1 / size), (f"uniform: the judge's confidence did not go with a smaller error on the "
                                         f"{np.asarray(confidence).size} labelled items ({why})")
    u = np.sqrt(predicted_squared_error(confidence, squared_error, confidence_everywhere))
    return draw_probabilities(u, uniform_share), (f"by confidence: a higher confidence went with a smaller error "
                                                  f"(one-sided Spearman p = {p:.3g}); τ = {uniform_share}")
