"""Every part each app needs of every task kind, and the check that no kind lacks one.

A task kind is one folder, kinds/<name>/, holding all its parts (definition, answer form and templates, LLM
prompt, scorer, model evaluation), registered by one line in kinds/kind_registry.py. Each app that uses parts of a
kind says which in a `kind_parts` module whose `PARTS` maps a part's name to a check `kind name -> bool`
("this kind has this part"): tasks_app below (the definition, its file format and payload template),
annotation (answer form and template, LLM prompt, keyboard help), agreement (scorer and its declarations,
model evaluation). This module finds them through Django's app registry, the way the admin finds `admin`
modules.

`missing_parts()` lists what is missing; the system check below runs it whenever Django checks the project
(runserver, migrate, `manage.py check`), and tests/test_kind_registry.py runs it too, so a kind that one app
forgot is an error, not a page that quietly shows "Other".
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module

from django.apps import apps
from django.core import checks
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from .core.kinds import KINDS, TaskKind

Check = Callable[[str], bool]  # kind name -> whether the kind has the part


def template_exists(name: str | None) -> bool:
    if not name:
        return False
    try:
        get_template(name)
    except TemplateDoesNotExist:
        return False
    return True


def _declares(attribute: str) -> Check:
    """The kind's class declares `attribute` (TaskKind only annotates the ones every kind must choose)."""
    return lambda kind: kind in KINDS and hasattr(KINDS[kind], attribute)


def _overrides(method: str) -> Check:
    return lambda kind: kind in KINDS and getattr(type(KINDS[kind]), method) is not getattr(TaskKind, method)


PARTS: dict[str, Check] = {
    "definition": lambda kind: kind in KINDS,
    "record parser": _overrides("parse_record"),
    "answer validator": _overrides("validate_answer"),
    **{attribute: _declares(attribute) for attribute in (
        "record_fields", "gold_field", "csv_fields", "stratified", "averageable", "mteb_type", "payload_template")},
    "payload template file": lambda kind: template_exists(getattr(KINDS.get(kind), "payload_template", None)),
}


def app_parts() -> dict[str, dict[str, Check]]:
    """{app label: its PARTS} for every installed app with a kind_parts module, in INSTALLED_APPS order."""
    found: dict[str, dict[str, Check]] = {}
    for config in apps.get_app_configs():
        name = f"{config.name}.kind_parts"
        try:
            module = import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module exists but an import inside it failed: say so
                raise
            continue
        found[config.label] = module.PARTS
    return found


def missing_parts(kinds: Iterable[str] | None = None) -> list[str]:
    """"<kind>: <app> has no <part>" for each part a kind lacks (every kind by default); empty when complete."""
    parts = app_parts()
    return [f"{kind}: {app} has no {part}"
            for kind in (KINDS if kinds is None else kinds)
            for app, checks_ in parts.items()
            for part, has in checks_.items() if not has(kind)]


@checks.register()
def kinds_are_complete(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    return [checks.Error(problem, hint='see docs/architecture.md, "Adding a task kind"', id="tasks_app.E001")
            for problem in missing_parts()]
