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
estimate is then ppi-python's with `w` (agreement/ppi/estimates.py). A batch labelled only in part counts the
draws up to the first one whose item has no label yet: a prefix of independent draws is itself one.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_UNIFORM_SHARE = 0.2  # τ: every weight at most 5× the uniform one


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
