"""The task kinds: one line per kind, naming its folder. A kind's name is its folder's name.

Everything about a kind lives in its folder (kinds/<name>/); the apps look a kind up here (`KINDS[name]`, or
`get_kind(name)` with an error naming the field) and never list the kinds themselves. Adding a kind: a folder,
one line below, and the migration of `Task.kind`'s choices (docs/architecture.md, "Adding a task kind").
"""
from __future__ import annotations

from importlib import import_module

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


def get_kind(name: str) -> TaskKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValidationProblem("kind", f"unknown task kind {name!r}; choose one of {sorted(KINDS)}") from None
