"""Imports follow the data (docs/architecture.md): annotation imports tasks_app, agreement imports both,
never the reverse; the settings package hume/ is the ground floor and imports no app (settings and urls
name them as strings)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LATER_APPS = {"tasks_app": {"annotation", "agreement"}, "annotation": {"agreement"},
              "hume": {"tasks_app", "annotation", "agreement"}}


def imported_apps(path: Path) -> set[str]:
    """Top-level packages a module imports, including imports inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("app", sorted(LATER_APPS))
def test_an_app_never_imports_an_app_later_in_the_data_flow(app: str) -> None:
    offending = {str(path.relative_to(REPO)): sorted(imported_apps(path) & LATER_APPS[app])
                 for path in sorted((REPO / app).rglob("*.py"))}
    assert {path: apps for path, apps in offending.items() if apps} == {}
