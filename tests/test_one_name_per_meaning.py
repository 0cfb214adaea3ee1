"""One name per meaning (issue 38 item 5; docs/style.md, "Naming"): a module-level table name is defined once in
the app code, so `KINDS` is the registry of task kinds (kinds/kind_registry.py) and `EVALUATIONS` the kinds'
model evaluations (agreement/kind_parts.py) wherever they are read; a table of something else says what it holds
(`SCORERS`, `ANNOTATOR_AGENTS`)."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
APP_ROOTS = ("annotation", "agreement", "tasks_app", "hume", "kinds", "measures")
ONE_TABLE = {"KINDS": "kinds/kind_registry.py", "EVALUATIONS": "agreement/model_runs/evaluate.py",
             "SCORERS": "agreement/core/scoring.py"}


def module_level_definitions() -> dict[str, list[str]]:
    """Each upper-case name assigned at module level in the app code, with the files that assign it."""
    found: dict[str, list[str]] = defaultdict(list)
    for root in APP_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                for target in targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        found[target.id].append(str(path.relative_to(REPO)))
    return found


def test_each_table_of_kinds_is_defined_once() -> None:
    found = module_level_definitions()
    assert {name: found[name] for name in ONE_TABLE} == {name: [path] for name, path in ONE_TABLE.items()}
