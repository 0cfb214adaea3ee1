"""A task's PPI estimates from its numbers (no Django): every estimand, over all items and per system or
group, and the differences between two systems.

`StudyNumbers` is what the loader (`agreement/ppi/ppi_loading.py`) reads from the database: for each item of the
task's pool, the judge's number per estimand and, on the labelled items, the mean of the humans' numbers.
`estimates_document` turns it into the document `python manage.py ppi` prints (keys in docs/ppi.md).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from measures.ppi.estimates import Estimate, Sample, active_estimate, difference, estimate, z_value
from measures.ppi.sequence import DEFAULT_T_STAR, MIN_LABELS, confidence_sequence

STRATA_FIELDS = ("system", "group")
MAX_GROUPS_FOR_DIFFERENCES = 10  # 45 pairs; more would bury the table
ITEM_VALUE = "the mean of the human answers on the item (several humans on one item: their mean)"
METHOD = ("PPI++ with the power-tuned λ (arXiv:2311.01453), as ppi-python 0.2.3 computes it; "
          "classical: the humans' mean and its CLT interval")


@dataclass(frozen=True)
class StudyNumbers:
    """One row per pool item: `judge[i, e]` the judge's number for estimand e, `human[i, e]` the mean of the
    humans' numbers (NaN on unlabelled items); `strata[field][i]` the item's system or group ("" = none);
    `label_order` the labelled rows in the order people first answered them, and `bounds` each estimand's
    (least, most) an answer's number can be (both for the confidence sequence).
    When some labels were drawn actively (measures/ppi/active.py), `draw_rows` lists every labelled draw's row
    (repeats kept) and `draw_weights` its weight 1/(M·p); otherwise the labelled items are a uniform sample."""

    items: list[str]
    estimands: list[str]
    judge: np.ndarray
    human: np.ndarray
    strata: dict[str, list[str]] = field(default_factory=dict)
    draw_rows: np.ndarray | None = None
    draw_weights: np.ndarray | None = None
    label_order: np.ndarray | None = None
    bounds: list[tuple[float, float]] = field(default_factory=list)
    n_human_answers: int = 0
    n_annotators_scored: int = 0

    @property
    def labelled(self) -> np.ndarray:
        return ~np.isnan(self.human[:, 0]) if self.human.size else np.zeros(len(self.items), dtype=bool)


def sample_for(numbers: StudyNumbers, column: int, rows: np.ndarray) -> Sample:
    """The PPI sample of one estimand over the items selected by the boolean mask `rows`."""
    labelled = numbers.labelled & rows
    unlabelled = ~numbers.labelled & rows
    return Sample(numbers.human[labelled, column], numbers.judge[labelled, column],
                  numbers.judge[unlabelled, column])


def scope_estimate(numbers: StudyNumbers, column: int, rows: np.ndarray, alpha: float) -> Estimate:
    """A uniform sample's PPI++ estimate, or an active design's weighted one, over the items in `rows`."""
    if numbers.draw_rows is None:
        return estimate(sample_for(numbers, column, rows), alpha)
    assert numbers.draw_weights is not None
    draws = numbers.draw_rows
    n_scope = int(rows.sum())
    weights = numbers.draw_weights * len(numbers.items) / n_scope  # 1/(M_s·p): the mean over the scope's items
    return active_estimate(numbers.human[draws, column], numbers.judge[draws, column], weights,
                           float(numbers.judge[rows, column].mean()), n_scope, alpha, in_scope=rows[draws])


def estimate_row(scope: str, group: str, estimand: str, result: Estimate) -> dict[str, Any]:
    values = result.as_dict()
    values["lambda"] = values.pop("lam")
    return {"scope": scope, "group": group, "estimand": estimand, **values}


def scopes(numbers: StudyNumbers) -> list[tuple[str, str, np.ndarray]]:
    """(scope, group, item mask): the whole task, then each system and group the items carry."""
    everything = np.ones(len(numbers.items), dtype=bool)
    found = [("task", "", everything)]
    for name in STRATA_FIELDS:
        values = np.asarray(numbers.strata.get(name, []), dtype=object)
        if values.size and any(values != ""):
            found += [(name, str(group), values == group) for group in sorted(set(values) - {""})]
    return found


def estimates_document(numbers: StudyNumbers, *, alpha: float = 0.05, target_half_width: float | None = None,
                       t_star: int = DEFAULT_T_STAR) -> dict[str, Any]:
    """Every estimand's PPI++ and classical estimate per scope, the differences between groups, and the whole
    task's confidence sequences (with the first look within ±target_half_width, when one is given)."""
    z_value(alpha)  # refuses a bad alpha before anything is computed
    rows, by_scope = [], {}
    for scope, group, mask in scopes(numbers):
        for column, estimand in enumerate(numbers.estimands):
            result = scope_estimate(numbers, column, mask, alpha)
            by_scope[scope, group, estimand] = result
            rows.append(estimate_row(scope, group, estimand, result))
    differences, notes = [], []
    for name in STRATA_FIELDS:
        groups = sorted({g for (s, g, _e) in by_scope if s == name})
        if numbers.draw_rows is not None and len(groups) > 1:
            notes.append(f"differences between {name}s are not computed for actively drawn labels (one draw "
                         "serves every system's estimate, so the two are not independent)")
            continue
        if len(groups) > MAX_GROUPS_FOR_DIFFERENCES:
            notes.append(f"{len(groups)} {name}s: differences are listed for at most {MAX_GROUPS_FOR_DIFFERENCES}")
            continue
        for a, b in combinations(groups, 2):
            for estimand in numbers.estimands:
                result = difference(a, by_scope[name, a, estimand], b, by_scope[name, b, estimand], alpha)
                differences.append({"scope": name, "estimand": estimand, **result.as_dict()})
    labelled = numbers.labelled
    return {
        "method": METHOD,
        "alpha": alpha,
        "confidence": 1 - alpha,
        "item_value": ITEM_VALUE,
        "sampling": sampling_statement(numbers),
        "n_items": len(numbers.items),
        "n_labelled": int(labelled.sum()),
        "n_unlabelled": int((~labelled).sum()),
        "n_human_answers": numbers.n_human_answers,
        "n_annotators_scored": numbers.n_annotators_scored,
        "estimands": list(numbers.estimands),
        "estimates": rows,
        "differences": differences,
        "differences_note": "; ".join(notes) or
            "a system's items are its own: the two estimates are independent, so their variances add",
        "sequences": [sequence_row(numbers, column, alpha, target_half_width, t_star)
                      for column in range(len(numbers.estimands))],
    }


LOOK_EVERY = 10  # labels between the looks a document lists (every look is computed; the last is always listed)


def sequence_row(numbers: StudyNumbers, column: int, alpha: float, target_half_width: float | None,
                 t_star: int = DEFAULT_T_STAR) -> dict[str, Any]:
    """The whole task's confidence sequence of one estimand, labels taken in the order people gave them."""
    estimand = numbers.estimands[column]
    order = numbers.label_order if numbers.label_order is not None else np.flatnonzero(numbers.labelled)
    row: dict[str, Any] = {"estimand": estimand, "min_labels": MIN_LABELS, "t_star": t_star, "n": len(order),
                           "looks": [],
                           "target_half_width": target_half_width, "target_reached_at": None, "reason": ""}
    if numbers.draw_rows is not None:
        return {**row, "reason": "not computed for actively drawn labels (the sequence assumes uniform arrivals)"}
    if len(order) < MIN_LABELS:
        return {**row, "reason": f"undefined: {len(order)} labelled items; the sequence starts at {MIN_LABELS}"}
    if len(numbers.bounds) != len(numbers.estimands):
        return {**row, "reason": "undefined: the estimand's bounds (least and most an answer's number can be) "
                                 "are not known"}
    sequence = confidence_sequence(numbers.human[order, column], numbers.judge[order, column],
                                   numbers.judge[:, column], numbers.bounds[column], alpha, t_star=t_star)
    half = sequence.half_width()
    listed = [i for i in range(len(sequence.t)) if sequence.t[i] % LOOK_EVERY == 0 or i == len(sequence.t) - 1]
    row["looks"] = [{"t": int(sequence.t[i]), "estimate": float(sequence.estimate[i]), "low": float(sequence.low[i]),
                     "high": float(sequence.high[i]), "half_width": float(half[i])} for i in listed]
    if target_half_width is not None:
        row["target_reached_at"] = sequence.first_within(target_half_width)
    return row


def sampling_statement(numbers: StudyNumbers) -> str:
    if numbers.draw_rows is not None:
        return ("active: some labels were drawn with known unequal probabilities (ppi_batch --active); each "
                "labelled draw is weighted by 1/(M·p) and the judge's mean over all items is used")
    return ("uniform: the interval is valid only if the labelled items are a uniform random sample of the "
            "task's items (batches made by `ppi_batch` are)")


def overall(document: dict[str, Any], estimand: str) -> dict[str, Any]:
    """The whole task's row of `estimand` in an estimates document."""
    return next(r for r in document["estimates"] if r["scope"] == "task" and r["estimand"] == estimand)


def rows_to_numbers(items: Sequence[str], estimands: Sequence[str], judge: Sequence[dict[str, float]],
                    human: Sequence[Sequence[dict[str, float]]], **extra: Any) -> StudyNumbers:
    """StudyNumbers from per-item dicts: `judge[i]` the judge's numbers, `human[i]` each human's (empty when
    the item is unlabelled); an item's human value is the mean of its humans' numbers."""
    judge_matrix = np.array([[row[e] for e in estimands] for row in judge], dtype=float).reshape(len(items),
                                                                                                 len(estimands))
    human_matrix = np.full_like(judge_matrix, np.nan)
    for i, answers in enumerate(human):
        if answers:
            human_matrix[i] = np.mean([[a[e] for e in estimands] for a in answers], axis=0)
    return StudyNumbers(list(items), list(estimands), judge_matrix, human_matrix, **extra)
