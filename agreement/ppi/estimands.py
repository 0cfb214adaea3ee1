"""What a PPI estimate estimates, per task kind: one answer turned into numbers, one per estimand (no Django).

An estimand is the mean over the task's items of a number each answer gives (docs/ppi.md, "What is
estimated"):

| kind | estimands (keys) | an answer's number |
|---|---|---|
| likert | `rating:<axis>` per axis | the rating on that axis |
| sts | `similarity` | the similarity |
| graded_relevance | `grade`, `share_at_least:<t>` | the item's mean grade; its share of documents graded ≥ t |
| classification | `share:<label>` per label | 1 if the answer is that label, else 0 |
| pairwise | `share:a`, `share:b`, `share:tie` | 1 if the answer is that choice, else 0 |

Several humans on one item: the item's human value is the mean of their numbers (a share of 2 of 3 people
choosing "a" is 0.667). Graded relevance is summarised per item (the unit people label and the sample is
drawn in), so the estimate is the mean over items of the per-item mean grade, not a mean over documents.
Reranking (0/1 lists scored by MAP) and clustering (partitions) have no mean of this form and are refused.

`numbers` checks an answer against the task's scale, axes, labels and documents and raises `OffScale` naming
the field, so answers on another scale (an import from a study that used 1–5 on a 1–7 task) are refused
rather than averaged in.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SUPPORTED_KINDS = ("likert", "sts", "graded_relevance", "classification", "pairwise")
PAIRWISE_CHOICES = ("a", "b", "tie")


class OffScale(ValueError):
    """An answer that is not on the task's scale, axes, labels or documents; the message names the field."""


@dataclass(frozen=True)
class Scale:
    """What `numbers` needs to know about the task (a plain copy of the task's settings)."""

    kind: str
    lo: float
    hi: float
    labels: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()
    threshold: float | None = None  # graded relevance: "relevant" means a grade ≥ threshold


def default_threshold(lo: float, hi: float) -> float:
    """Graded relevance's default "relevant" grade: 70% up the scale, 7 on 0–10 (the judges' threshold of
    docs/retrieval.md, "Evaluating runs")."""
    return lo + 0.7 * (hi - lo)


def estimand_names(scale: Scale) -> list[str]:
    """The keys `numbers` returns for this task, in the order reports list them."""
    if scale.kind == "likert":
        return [f"rating:{axis}" for axis in scale.axes]
    if scale.kind == "sts":
        return ["similarity"]
    if scale.kind == "graded_relevance":
        return ["grade", f"share_at_least:{scale.threshold:g}"]
    if scale.kind == "classification":
        return [f"share:{label}" for label in scale.labels]
    if scale.kind == "pairwise":
        return [f"share:{choice}" for choice in PAIRWISE_CHOICES]
    raise ValueError(f"{scale.kind} tasks have no PPI estimate: it is defined for {', '.join(SUPPORTED_KINDS)} "
                     "(a mean over items of a number each answer gives)")


def _number(value: Any, field: str, scale: Scale) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OffScale(f"{field}: expected a number, got {value!r}")
    if not scale.lo - 1e-9 <= value <= scale.hi + 1e-9:
        raise OffScale(f"{field}: {value:g} is not on the task's scale {scale.lo:g}–{scale.hi:g}")
    return float(value)


def _keyed(value: Any, expected: Sequence[str], what: str) -> dict[str, Any]:
    if not isinstance(value, dict) or sorted(value) != sorted(expected):
        got = sorted(value) if isinstance(value, dict) else type(value).__name__
        raise OffScale(f"value: expected one score per {what} {list(expected)}, got {got}")
    return value


def numbers(value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
    """An answer's number per estimand; `documents` are the item's document ids (graded relevance)."""
    if scale.kind == "likert":
        scores = _keyed(value, scale.axes, "axis")
        return {f"rating:{axis}": _number(scores[axis], f"value.{axis}", scale) for axis in scale.axes}
    if scale.kind == "sts":
        return {"similarity": _number(value, "value", scale)}
    if scale.kind == "graded_relevance":
        grades = _keyed(value, documents, "document")
        values = [_number(grades[d], f"value.{d}", scale) for d in documents]
        threshold = scale.threshold if scale.threshold is not None else default_threshold(scale.lo, scale.hi)
        return {"grade": sum(values) / len(values),
                f"share_at_least:{threshold:g}": sum(v >= threshold for v in values) / len(values)}
    choices = scale.labels if scale.kind == "classification" else PAIRWISE_CHOICES
    if scale.kind in ("classification", "pairwise"):
        if value not in choices:
            what = "labels" if scale.kind == "classification" else "choices"
            raise OffScale(f"value: {value!r} is not one of the task's {what} {list(choices)}")
        return {f"share:{choice}": float(value == choice) for choice in choices}
    estimand_names(scale)  # raises the refusal for the other kinds
    raise AssertionError(scale.kind)
