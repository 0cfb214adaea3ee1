"""What a PPI estimate estimates: the estimands of a task, and an answer's number for each (no Django).

An estimand is the mean over the task's items of a number each answer gives (docs/ppi.md, "What is
estimated"). Which estimands a kind has, and how an answer becomes their numbers, is the kind's own
(`ppi_estimands` in kinds/<name>/definition.py, on the frame in kinds/ppi_estimands.py); the loader
(agreement/ppi/ppi_loading.py) reads it from the registry and hands it here inside the `Scale`, so this module
names no kind and stays free of Django. A kind without estimands (reranking, clustering) is refused.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kinds.ppi_estimands import OffScale, Scale

__all__ = ["OffScale", "Scale", "estimand_bounds", "estimand_names", "numbers"]


def _estimands(scale: Scale) -> Any:
    if scale.estimands is None:
        raise ValueError(f"{scale.kind} tasks have no PPI estimate (a mean over items of a number each answer "
                         "gives)")
    return scale.estimands


def estimand_names(scale: Scale) -> list[str]:
    """The keys `numbers` returns for this task, in the order reports list them."""
    return _estimands(scale).names(scale)


def estimand_bounds(scale: Scale) -> list[tuple[float, float]]:
    """(least, most) an answer's number can be, per estimand in `estimand_names` order (shares 0–1, ratings the
    task's scale): the confidence sequence's guarantee rests on them (measures/ppi/sequence.py)."""
    estimands = _estimands(scale)
    return [estimands.bounds(name, scale) for name in estimands.names(scale)]


def numbers(value: Any, scale: Scale, documents: Sequence[str] = ()) -> dict[str, float]:
    """An answer's number per estimand; `documents` are the item's document ids (graded relevance)."""
    return _estimands(scale).numbers(value, scale, documents)
