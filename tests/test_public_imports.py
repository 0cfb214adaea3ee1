"""No module imports another module's private name (issue 38 item 5; docs/style.md, "Naming").

A leading underscore says "only this module uses it"; a helper two modules share is public and named for what it
does (`kinds.scorers.mean_or_none`, `measures.metric_base.is_constant`). This test reads every project module,
tests included, and fails on `from project.module import _name`; in the app code it also fails on a private
attribute read off a project module (metrics._helper). Tests and benchmarks may still read a module's private
process state through its module (a test clears or inspects a cache, `execution._held`; a benchmark swaps in a
stand-in backend): that is looking inside on purpose, not sharing a helper. Private names of other libraries
(mteb's, ppi-python's), which a parity test may reach on purpose, are theirs to name and are left out. Dunder
names are not private; a model's _meta is a class attribute (Django's model API), not a module's.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("annotation", "agreement", "tasks_app", "hume", "kinds", "measures", "tests", "bench", "demo", "scripts")
PROJECT = {"annotation", "agreement", "tasks_app", "hume", "kinds", "measures", "tests", "bench", "demo"}
LOOKING_INSIDE = ("tests", "bench")  # may read a module's private state through the module (see above)


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def modules() -> list[Path]:
    paths = [path for root in ROOTS if (REPO / root).exists() for path in (REPO / root).rglob("*.py")]
    return sorted(path for path in paths if "migrations" not in path.relative_to(REPO).parts)


def is_module(dotted: str) -> bool:
    """Whether a dotted name is a module or package of the project (not a class or function in one)."""
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def private_uses(source: str, attributes: bool = True) -> list[tuple[int, str]]:
    """(line, what) for each private name of a project module that `source` imports or reads off a module."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    project_modules: set[str] = set()  # local names bound to a project module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] not in PROJECT:
                continue
            for alias in node.names:
                if private(alias.name):
                    found.append((node.lineno, f"from {'.' * node.level}{node.module or ''} import {alias.name}"))
                if is_module(f"{node.module}.{alias.name}" if node.module else alias.name):
                    project_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROJECT:
                    project_modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree) if attributes else ():
        if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in project_modules:
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    found = [f"{path.relative_to(REPO)}:{line}: {what}" for path in modules()
             for line, what in private_uses(path.read_text(encoding="utf-8"),
                                            attributes=path.relative_to(REPO).parts[0] not in LOOKING_INSIDE)]
    assert not found, "a private name used across modules (make it public, named for what it does):\n" + \
        "\n".join(found)


def test_the_check_sees_an_import_and_a_module_attribute_and_spares_other_libraries() -> None:
    source = ("from kinds.scorers import _mean\nfrom measures import metrics as m\nimport numpy as np\n"
              "from ppi_py.ppi import _calc_lam_glm\nfrom annotation.models import Item\n"
              "m._hidden()\nnp._private\nm.__name__\nItem._meta\n")
    assert private_uses(source) == [(1, "from kinds.scorers import _mean"), (6, "m._hidden")]
    assert private_uses(source, attributes=False) == [(1, "from kinds.scorers import _mean")]
