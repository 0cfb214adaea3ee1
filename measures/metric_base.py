"""The shape every metric shares: `Metric` (a value or None with a reason, never NaN) and `Undefined`.

Pure like the metric modules that build on it (`metrics`, `intervals`, `ranking`): no Django.
A value that is mathematically undefined is None, never NaN (reports are JSON): calling a `Metric`
gives `float | None`, and `.explain(...)` gives `(value, reason)` from the same code path, so a
report can say *why* a value is missing.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

P = ParamSpec("P")
R = TypeVar("R", float, tuple[float, float])
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Interval = tuple[float, float]
SINGLE_ANNOTATOR = "n/a: single annotator"

class Undefined(ValueError):
    """Raised inside a metric when it has no value on this data; the message is the reason."""


class Metric(Generic[P, R]):
    """A metric that answers None (with a reason) instead of NaN or a crash when undefined."""

    def __init__(self, fn: Callable[P, R]) -> None:
        self._fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R | None:
        return self.explain(*args, **kwargs)[0]

    def explain(self, *args: P.args, **kwargs: P.kwargs) -> tuple[R | None, str | None]:
        """Return (value, None) or (None, reason); library warnings on degenerate data are muted
        because the degenerate case is answered explicitly instead."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                warnings.simplefilter("ignore", UserWarning)
                value = self._fn(*args, **kwargs)
        except Undefined as exc:
            return None, str(exc)
        numbers = value if isinstance(value, tuple) else (value,)
        if not all(math.isfinite(float(v)) for v in numbers):
            return None, "undefined: the computation gave no finite value"
        clean = tuple(float(v) for v in numbers) if isinstance(value, tuple) else float(value)
        return clean, None  # type: ignore[return-value]


def metric(fn: Callable[P, R]) -> Metric[P, R]:
    """Decorator turning a function that may raise `Undefined` into a `Metric`."""
    return Metric(fn)

def require_two_raters(matrix: npt.NDArray[Any]) -> None:
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise Undefined(SINGLE_ANNOTATOR)


def is_constant(a: npt.NDArray[Any]) -> bool:
    return bool(a.size == 0 or (a == a.flat[0]).all())


def partition_codes(labels: Sequence[Hashable]) -> IntArray:
    """Cluster ids → codes by first appearance, so str and int ids (or mixes) compare safely."""
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(v, len(index)) for v in labels], dtype=np.int64)
