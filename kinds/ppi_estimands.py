"""What a PPI estimate estimates, the frame each kind's own estimands fill in (no Django).

An estimand is the mean over the task's items of a number each answer gives (docs/ppi.md, "What is
estimated"). A kind that has PPI estimates sets `ppi_estimands` in its definition.py to a `KindEstimands`
saying which estimands it has and what number an answer gives for each; a kind without (reranking's 0/1 lists
scored by MAP, clustering's partitions: no mean of this form) leaves it None, and PPI refuses its tasks.

Several humans on one item: the item's human value is the mean of their numbers (a share of 2 of 3 people
choosing "a" is 0.667). A kind's `numbers` checks an answer against the task's scale, axes, labels and
documents and raises `OffScale` naming the field, so answers on another scale (an import from a study that
used 1–5 on a 1–7 task) are refused rather than averaged in.

This module and the kinds' estimands import nothing from Django: the PPI maths (agreement/ppi/estimands.py)
stays pure, and the loader (agreement/ppi/ppi_loading.py) hands it the kind's estimands inside the `Scale`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


class OffScale(ValueError):
    """An answer that is not on the task's scale, axes, labels or documents; the message names the field."""


class KindEstimands:
    """One kind's PPI estimands: their keys, and an answer's number for each."""

    def names(self, scale: Scale) -> list[str]:
        """The keys `numbers` returns for this task, in the order reports list them."""
        raise NotImplementedError

    def numbers(self, value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
        """An answer's number per estimand; `documents` are the item's document ids (graded relevance)."""
        raise NotImplementedError

    def default_threshold(self, lo: float, hi: float) -> float | None:
        """The threshold an estimand of this kind uses when none is given (None: it uses none)."""
        return None

    def bounds(self, name: str, scale: Scale) -> tuple[float, float]:
        """The least and the most an answer's number for estimand `name` can be (the confidence sequence's
        guarantee rests on them): the task's scale, unless the estimand is a share."""
        return (scale.lo, scale.hi)


@dataclass(frozen=True)
class Scale:
    """What the estimands need to know about the task (a plain copy of the task's settings), and the kind's
    estimands (None: the kind has no PPI estimate)."""

    kind: str
    lo: float
    hi: float
    labels: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()
    threshold: float | None = None  # graded relevance: "relevant" means a grade ≥ threshold
    estimands: KindEstimands | None = field(default=None, compare=False)


def number_on_scale(value: Any, field_name: str, scale: Scale) -> float:
    """`value` as a float when it is a number on the task's scale, else OffScale naming `field_name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OffScale(f"{field_name}: expected a number, got {value!r}")
    if not scale.lo - 1e-9 <= value <= scale.hi + 1e-9:
        raise OffScale(f"{field_name}: {value:g} is not on the task's scale {scale.lo:g}–{scale.hi:g}")
    return float(value)


def keyed(value: Any, expected: Sequence[str], what: str) -> dict[str, Any]:
    """`value` when it is a dict with exactly the keys `expected` (one score per axis or document)."""
    if not isinstance(value, dict) or sorted(value) != sorted(expected):
        got = sorted(value) if isinstance(value, dict) else type(value).__name__
        raise OffScale(f"value: expected one score per {what} {list(expected)}, got {got}")
    return value


def choice_shares(value: Any, choices: Sequence[str], what: str) -> dict[str, float]:
    """`share:<choice>` for each choice: 1 for the one answered, else 0; an answer off the list is refused."""
    if value not in choices:
        raise OffScale(f"value: {value!r} is not one of the task's {what} {list(choices)}")
    return {f"share:{choice}": float(value == choice) for choice in choices}


class ChoiceShares(KindEstimands):
    """`share:<choice>` per choice: the share of answers that chose it (a label, or a side of a pair)."""

    what = "labels"

    def choices(self, scale: Scale) -> Sequence[str]:
        return scale.labels

    def names(self, scale: Scale) -> list[str]:
        return [f"share:{choice}" for choice in self.choices(scale)]

    def numbers(self, value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
        return choice_shares(value, self.choices(scale), self.what)

    def bounds(self, name: str, scale: Scale) -> tuple[float, float]:
        return (0.0, 1.0)
