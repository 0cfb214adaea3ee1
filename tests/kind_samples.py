"""The registered kinds' samples (each kind's samples.py, kinds/samples.py) as tables for the tests.

`SampleTable("records")` is {kind name: that kind's sample records}, read live from the registry, so a generic
test iterates the kinds registered now (a copied folder too) and no test file lists the kinds."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kinds.kind_registry import Parts
from kinds.samples import KindSamples

SAMPLES: Parts[KindSamples] = Parts("samples")  # {kind name: its KindSamples}


class SampleTable(Mapping[str, Any]):
    """{kind name: one field of its samples}; kinds whose field is None (no CSV, say) are left out."""

    def __init__(self, field: str) -> None:
        self.field = field

    def __getitem__(self, name: str) -> Any:
        value = getattr(SAMPLES[name], self.field)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in SAMPLES if getattr(SAMPLES[name], self.field) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)
