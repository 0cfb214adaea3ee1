"""Cohen's κ per annotator pair, with the number of items the pair shares, and their mean.

Why per pair: with overlap-k batches most pairs share few items, and a κ on three shared items says little;
one such pair can swing the mean. Each pair is listed with its shared count, and pairs sharing fewer than a
minimum (the KAPPA_MIN_SHARED_ITEMS setting, default 10) are shown as excluded and left out of the mean.
Pure like `metrics`: numpy in, dicts out, no Django.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.metrics import cohen_kappa_score

from measures.metric_base import SINGLE_ANNOTATOR, Undefined, is_constant, metric

MIN_SHARED_DEFAULT = 10
ONE_CATEGORY = "undefined: both answered one and the same category (chance agreement is 1)"


def cohen_kappa_pairs(codes: npt.ArrayLike, names: Sequence[str], min_shared: int = MIN_SHARED_DEFAULT,
                      ) -> list[dict[str, Any]]:
    """Every annotator pair sharing at least one item: `a`, `b`, `n_shared`, `kappa` (sklearn's
    cohen_kappa_score on the shared items; None with a `reason` when undefined) and `excluded` (fewer than
    `min_shared` shared items). `codes` is items × annotators, -1 = not answered."""
    c = np.asarray(codes, dtype=np.int64)
    pairs = []
    for i, j in itertools.combinations(range(c.shape[1]), 2):
        both = (c[:, i] >= 0) & (c[:, j] >= 0)
        shared = int(both.sum())
        if not shared:
            continue
        a, b = c[both, i], c[both, j]
        kappa, reason = None, None
        if is_constant(a) and is_constant(b) and a[0] == b[0]:
            reason = ONE_CATEGORY
        else:
            kappa = float(cohen_kappa_score(a, b))
        excluded = shared < min_shared
        if excluded:
            reason = f"excluded: {shared} shared item{'s' if shared != 1 else ''}, fewer than {min_shared}"
        pairs.append({"a": names[i], "b": names[j], "n_shared": shared, "kappa": kappa,
                      "excluded": excluded, "reason": reason})
    return pairs


@metric
def pairs_mean(pairs: Sequence[dict[str, Any]], n_annotators: int, min_shared: int) -> float:
    """Mean κ over the pairs kept (not excluded, defined); Undefined says why none was kept."""
    if n_annotators < 2:
        raise Undefined(SINGLE_ANNOTATOR)
    kept = [p["kappa"] for p in pairs if not p["excluded"] and p["kappa"] is not None]
    if kept:
        return float(np.mean(kept))
    if not pairs:
        raise Undefined("n/a: no two annotators answered the same item")
    if all(p["excluded"] for p in pairs):
        raise Undefined(f"n/a: no annotator pair shares {min_shared} or more items "
                        f"({len(pairs)} pair{'s' if len(pairs) != 1 else ''} excluded)")
    raise Undefined(ONE_CATEGORY.replace("both", "every pair"))


def summary(codes: npt.ArrayLike, names: Sequence[str], min_shared: int, unit: str = "items",
            ) -> tuple[tuple[float | None, str | None], dict[str, Any]]:
    """(mean κ, note) for the agreement table, and the per-pair block of the report JSON."""
    c = np.asarray(codes, dtype=np.int64)
    pairs = cohen_kappa_pairs(c, names, min_shared)
    value, reason = pairs_mean.explain(pairs, c.shape[1] if c.ndim == 2 else 0, min_shared)
    kept = sum(1 for p in pairs if not p["excluded"] and p["kappa"] is not None)
    n_excluded = sum(1 for p in pairs if p["excluded"])
    n_possible = len(names) * (len(names) - 1) // 2
    note = reason
    if value is not None:
        note = (f"mean over {kept} annotator pair{'s' if kept != 1 else ''} sharing {min_shared} or more {unit}"
                + (f"; {n_excluded} pair{'s' if n_excluded != 1 else ''} with fewer excluded" if n_excluded else ""))
    block = {"min_shared": min_shared, "unit": unit, "n_pairs_included": kept, "n_pairs_excluded": n_excluded,
             "n_pairs_without_shared": n_possible - len(pairs), "pairs": pairs}
    return (value, note), block
