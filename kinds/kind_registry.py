"""The task kinds: one line per kind, naming its folder. A kind's name is its folder's name.

Everything about a kind lives in its folder (kinds/<name>/); the apps look a kind up here (`KINDS[name]`, or
`get_kind(name)` with an error naming the field, or `Parts`, a live table of one part) and never list the kinds
themselves. Adding a kind: a folder and one line below; `Task.kind`'s choices are `kind_choices`, read from
here, so no migration (docs/architecture.md, "Adding a task kind").
"""
from __future__ import annotations

import inspect
from collections.abc import Iterator, MutableMapping
from importlib import import_module
from pathlib import Path
from typing import TypeVar

from kinds.base import TaskKind, ValidationProblem

PACKAGES = (
    "kinds.classification",
    "kinds.clustering",
    "kinds.reranking",
    "kinds.graded_relevance",
    "kinds.sts",
    "kinds.pairwise",
    "kinds.likert",
)

KINDS: dict[str, TaskKind] = {}
Part = TypeVar("Part")


def register(package: str) -> TaskKind:
    """Load the kind in `package` (its `Kind` class), named after the package's last part, and add it."""
    kind = import_module(package).Kind(package.rpartition(".")[2])
    KINDS[kind.name] = kind
    return kind


for _package in PACKAGES:
    register(_package)


def kind_choices() -> list[tuple[str, str]]:
    """(name, label) of every registered kind, for `Task.kind` and the forms (a callable, so it stays live)."""
    return [(name, kind.label) for name, kind in KINDS.items()]


KIND_CHOICES = kind_choices()  # the registered kinds at start-up, for code that needs a list (the API schema)


def kind_of_mteb_type(mteb_type: str) -> str:
    """The name of the registered kind whose tasks are MTEB's `mteb_type` (a retrieval pool's judging task is
    the "Retrieval" kind's), so an app that makes tasks of one type names the type, not a kind."""
    names = [name for name, kind in KINDS.items() if kind.mteb_type == mteb_type]
    if len(names) != 1:
        raise LookupError(f"{len(names)} registered kinds have the MTEB task type {mteb_type!r}: {names}")
    return names[0]


def get_kind(name: str) -> TaskKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValidationProblem("kind", f"unknown task kind {name!r}; choose one of {sorted(KINDS)}") from None


class Parts(MutableMapping[str, Part]):
    """{kind name: one part of each registered kind} (its answer form, prompt, scorer, ...), read live from the
    registry, so an app holds a table of a part without listing the kinds. A kind without the part (None) is
    left out. Setting or deleting an entry sets the kind's part (tests take a part away this way)."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __getitem__(self, name: str) -> Part:
        part = getattr(KINDS[name], self.attribute, None) if name in KINDS else None
        if part is None:
            raise KeyError(name)
        return part

    def __setitem__(self, name: str, part: Part) -> None:
        setattr(KINDS[name], self.attribute, part)

    def __delitem__(self, name: str) -> None:
        self[name]  # KeyError when there is none
        setattr(KINDS[name], self.attribute, None)

    def __iter__(self) -> Iterator[str]:
        return (name for name, kind in KINDS.items() if getattr(kind, self.attribute, None) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"Parts({self.attribute!r}: {dict(self)!r})"


def kind_folder(name: str) -> Path | None:
    """The folder of the registered kind `name` (its templates are in its templates/), or None."""
    kind = KINDS.get(name)
    if kind is None:
        return None
    return Path(inspect.getfile(type(kind))).parent
