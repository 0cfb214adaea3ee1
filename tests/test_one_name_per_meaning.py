"""One name per meaning (issue 38 item 5; docs/style.md, "Naming"): a module-level table name is defined once in
the app code, so `KINDS` is the registry of task kinds (kinds/kind_registry.py) and `EVALUATIONS` the kinds'
model evaluations (agreement/kind_parts.py) wherever they are read; a table of something else says what it holds
(`SCORERS`, `ANNOTATOR_AGENTS`)."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from django.apps import apps

from hume.jobs.models import LEASE_FIELDS

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


def app_sources() -> dict[str, str]:
    """Each app-code file, template and static script or style sheet with its text (migrations left out: they keep
    the old names by nature)."""
    code = {str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
            for root in APP_ROOTS for path in sorted((REPO / root).rglob("*.py")) if "migrations" not in path.parts}
    pages = {str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
             for root in ("templates", "static") for path in sorted((REPO / root).rglob("*"))
             if path.suffix in (".html", ".js", ".css")}
    return {**code, **pages}


def test_kind_is_a_field_of_the_task_only() -> None:
    with_kind = sorted(model._meta.label for model in apps.get_models()
                       if any(field.name == "kind" for field in model._meta.get_fields()))
    assert with_kind == ["tasks_app.Task"], "an annotator's or a results entry's kind is its `agent`"


def test_every_lease_column_is_the_job_layers() -> None:
    """A model field named for a lease is one of the job layer's columns (hume/jobs/models.py LEASE_FIELDS); the
    assignment's hold is `Hold`, `held_at`, `Batch.hold_seconds`."""
    stray = sorted(f"{model._meta.label}.{field.name}" for model in apps.get_models()
                   for field in model._meta.get_fields()
                   if "lease" in field.name.replace("release", "") and field.name not in LEASE_FIELDS)
    assert stray == []
    assert "Lease" not in {model.__name__ for model in apps.get_models()}


def test_the_lease_class_is_defined_by_the_job_layer_only() -> None:
    defined = sorted((path, node.name) for path, text in app_sources().items() if path.endswith(".py")
                     for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.ClassDef) and re.fullmatch(r"_?\w*Lease\w*", node.name)
                     and node.name not in ("LeaseLost",))
    assert defined == [("hume/jobs/lease.py", "BatchLease"), ("hume/jobs/lease.py", "Lease")]


def test_the_old_names_are_read_only_where_one_version_still_accepts_them() -> None:
    """`annotator_kind` (answers import), `lease_seconds` (batches API; `--lease-seconds` of create_batch) are read
    for one more version (docs/import.md, docs/batches.md); nothing else names them, nor the renamed identifiers
    (the job layer's own `lease_seconds` aside, and model runs sizing a batch of chunk claims by it)."""
    old = {"annotator_kind": {"annotation/answer_import.py"},
           "lease_seconds": {"annotation/manage/serializers.py", "hume/jobs/lease.py", "hume/jobs/recovery.py",
                             "agreement/model_runs/execution.py"},
           "lease-seconds": {"annotation/management/commands/create_batch.py"},
           "ANNOTATOR_KINDS": set(), "annotator_kinds": set(), "leased_at": set(), "release_leases": set(),
           "not_leased": set(), "DEFAULT_LEASE_SECONDS": set(), "lease_minutes": set(), "Annotator.Kind": set(),
           "ResultModel.Kind": set(), "ENTRY_KINDS": set()}
    found = {name: {path for path, text in app_sources().items() if re.search(rf"\b{re.escape(name)}\b", text)}
             for name in old}
    assert found == old
