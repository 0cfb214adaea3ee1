"""Imports follow the data (docs/architecture.md): annotation imports tasks_app, agreement imports both,
never the reverse; the settings package hume/ is the ground floor and imports no app (settings and urls
name them as strings). Below everything, the Django-free maths package measures/ imports no project package,
and the task kinds (kinds/, one folder per kind) import only measures/, Django and libraries: the apps look a
kind up in kinds/kind_registry.py, so data flows one way.

Inside the apps: no import cycle between modules, no management command imported as a library, and agreement's
sub-packages in the declared order of docs/architecture.md ("agreement/ in a declared order").

On the ground floor, the library layer (hume/lib/) and the job layer (hume/jobs/) import no app and no kind,
not even inside a function: every app may use them because they use none (docs/architecture.md, "The library
layer"). The library does not reach up into hume's own wiring either (URL trees, views, the job layer)."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
APPS = ("measures", "kinds", "hume", "tasks_app", "annotation", "agreement")
LATER_APPS = {"tasks_app": {"annotation", "agreement"}, "annotation": {"agreement"},
              "hume": {"tasks_app", "annotation", "agreement"},
              "measures": {"kinds", "hume", "tasks_app", "annotation", "agreement", "django"},
              "kinds": {"hume", "tasks_app", "annotation", "agreement"}}

# agreement/'s layers: a module is in the first layer with a pattern that matches it; AGREEMENT_ORDER lists the
# layers lowest first, peers together. A module imports only from its own layer or a lower one, and peers never
# import each other. The shell of the app `agreement` (its pages and the report page's charts, API, admin,
# Celery tasks, signal handlers, template tags and commands) wires every sub-package together, so it is on top;
# each sub-package's own pages stay in its layer.
AGREEMENT_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shell", ("agreement.views", "agreement.api", "agreement.api_urls", "agreement.urls", "agreement.admin",
               "agreement.apps", "agreement.signals", "agreement.tasks", "agreement.report_charts",
               "agreement.templatetags", "agreement.templatetags.*", "agreement.management",
               "agreement.management.*")),
    ("results", ("agreement.results", "agreement.results.*")),
    ("model_runs", ("agreement.model_runs", "agreement.model_runs.*")),
    ("retrieval", ("agreement.retrieval", "agreement.retrieval.*")),
    ("sage", ("agreement.sage", "agreement.sage.*")),
    ("ppi", ("agreement.ppi", "agreement.ppi.*")),
    ("escalation", ("agreement.escalation", "agreement.escalation.*")),
    ("core", ("agreement", "agreement.*")),
)
AGREEMENT_ORDER = (("core",), ("model_runs",), ("results",), ("retrieval", "sage", "escalation"), ("ppi",),
                   ("shell",))
# Django finds an app's models only in <app>.models, so agreement/models.py imports results/models.py and
# ppi/models.py (whose models belong to the app `agreement`): a registration, not a use.
REGISTRATIONS = {("agreement.models", "agreement.results.models"), ("agreement.models", "agreement.ppi.models")}
# The campaign's maths (measures/campaign/) takes the pure PPI maths from this one module until those modules move
# under measures/ (issue 38's folders); it may import them, and nothing else of agreement.
BRIDGES = {"measures/campaign/ppi_maths.py": {"agreement.ppi.estimates", "agreement.ppi.planner",
                                              "agreement.ppi.sequence"}}


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
    for path, modules in BRIDGES.items():
        if path.startswith(f"{app}/"):
            assert imported_modules(REPO / path) == modules
            offending.pop(path)
    assert {path: apps for path, apps in offending.items() if apps} == {}


def imported_modules(path: Path) -> set[str]:
    """The project modules a module imports by absolute name (its bridge's exact list)."""
    names = {node.module for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom)
             and node.level == 0 and node.module and node.module.split(".")[0] in APPS}
    return names


# ---------------------------------------------------------------------------------------------
# The module graph of the app code


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def app_modules() -> dict[str, Path]:
    """Every module of the apps (migrations included: they are code that imports too)."""
    return {module_name(path): path for app in APPS for path in sorted((REPO / app).rglob("*.py"))}


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Each dotted name a module imports, anywhere in it (a deferred import inside a function counts):
    ``import a.b`` gives ``a.b``; ``from a import b`` gives ``a`` and ``a.b`` (b may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module → the app modules it imports (itself left out)."""
    modules = app_modules()
    return {module: frozenset(name for name in imported_names(module, path) if name in modules and name != module)
            for module, path in modules.items()}


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(component: list[str], graph: dict[str, frozenset[str]]) -> str:
    members = set(component)
    return "\n".join(f"  {module} -> {', '.join(sorted(graph[module] & members))}" for module in component)


def test_the_cycle_finder_finds_a_cycle_and_a_longer_one() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"a"}), "c": frozenset({"d"}), "d": frozenset({"e"}),
             "e": frozenset({"c", "f"}), "f": frozenset()}
    assert cycles(graph) == [["a", "b"], ["c", "d", "e"]]


def test_the_graph_sees_deferred_relative_and_submodule_imports() -> None:
    graph = import_graph()
    assert "agreement.reports" in graph["agreement.results.project"]  # from agreement.reports import ...
    assert "measures.metrics" in graph["agreement.results.project"]  # from measures import metrics as m
    assert "hume.celery" in graph["hume"]  # from .celery import app (relative)
    assert "agreement.signals" in graph["agreement.apps"]  # inside AppConfig.ready


def test_no_import_cycle_anywhere_in_the_app_code() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, f"{len(found)} import cycle(s):\n" + "\n\n".join(describe(c, graph) for c in found)


def test_no_module_imports_a_management_command() -> None:
    """A command is a thin wrapper: code it shares with other modules lives in a library module."""
    offending = sorted(f"{module} -> {name}" for module, names in import_graph().items() for name in names
                       if ".management.commands." in f"{name}.")
    assert offending == []


# ---------------------------------------------------------------------------------------------
# agreement/ in its declared order


def in_agreement(module: str) -> bool:
    return module == "agreement" or module.startswith("agreement.")


def layer_of(module: str) -> str:
    return next(name for name, patterns in AGREEMENT_LAYERS if any(fnmatchcase(module, p) for p in patterns))


def rank(layer: str) -> int:
    return next(i for i, layers in enumerate(AGREEMENT_ORDER) if layer in layers)


def test_every_agreement_layer_is_placed_in_the_order() -> None:
    assert sorted(name for name, _ in AGREEMENT_LAYERS) == sorted(name for names in AGREEMENT_ORDER for name in names)
    assert layer_of("agreement.scoring") == "core" and layer_of("agreement.views") == "shell"
    assert layer_of("agreement.model_runs.views") == "model_runs"
    assert layer_of("agreement.management.commands.sage") == "shell"
    assert layer_of("agreement.escalation.calibration") == "escalation"


def test_an_agreement_layer_never_imports_a_later_layer() -> None:
    upward = sorted(
        f"{module} ({layer_of(module)}) -> {name} ({layer_of(name)})"
        for module, names in import_graph().items() if in_agreement(module) and ".migrations" not in module
        for name in names
        if in_agreement(name) and rank(layer_of(name)) > rank(layer_of(module))
        and (module, name) not in REGISTRATIONS)
    assert upward == []


def test_peer_layers_do_not_import_each_other() -> None:
    peers = {layer for layers in AGREEMENT_ORDER if len(layers) > 1 for layer in layers}
    graph = {module: names for module, names in import_graph().items() if in_agreement(module)}
    sideways = sorted(f"{module} -> {name}" for module, names in graph.items() if layer_of(module) in peers
                      for name in names if name in graph and layer_of(name) in peers - {layer_of(module)})
    assert sideways == []


# ---------------------------------------------------------------------------------------------
# The library layer and the job layer

GROUND_LAYERS = {
    "hume.lib": {"tasks_app", "annotation", "agreement", "kinds", "hume.jobs", "hume.urls", "hume.api_urls",
                 "hume.api_root", "hume.views", "hume.navigation"},
    "hume.jobs": {"tasks_app", "annotation", "agreement", "kinds"},
}


def reaches(name: str, forbidden: set[str]) -> bool:
    return any(name == target or name.startswith(f"{target}.") for target in forbidden)


def layer_imports(layer: str) -> dict[str, list[str]]:
    """Each module of a ground layer → the dotted names it imports that the layer may not."""
    forbidden = GROUND_LAYERS[layer]
    return {module: sorted({name for name in imported_names(module, path) if reaches(name, forbidden)})
            for module, path in app_modules().items() if module == layer or module.startswith(f"{layer}.")}


@pytest.mark.parametrize("layer", sorted(GROUND_LAYERS))
def test_the_library_and_job_layers_import_no_app(layer: str) -> None:
    found = layer_imports(layer)
    assert found, f"{layer} has no modules"  # the layer is where the test looks for it
    assert {module: names for module, names in found.items() if names} == {}


def test_the_library_holds_the_shared_infrastructure() -> None:
    """What moved into hume/lib/ is there and nowhere else (a copy left behind would be used by someone)."""
    library = {name.rpartition(".")[2] for name in app_modules() if name.startswith("hume.lib.")}
    assert {"http_client", "http_transport", "aio_transport", "endpoint_policy", "inflight", "csv_safety",
            "import_reader", "upload_api", "sql", "htmx"} <= library
    elsewhere = sorted(name for name in app_modules() if not name.startswith("hume.lib")
                       and name.rpartition(".")[2] in {"client", "transport", "aio_transport", "endpoint_policy",
                                                       "inflight", "csv_safety", "reader"})
    assert elsewhere == []


def test_the_ground_layer_check_sees_a_deferred_app_import(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("def later():\n    from annotation.models import Annotator\n    import kinds.kind_registry\n")
    names = set(imported_names("hume.lib.sample", module))
    assert {name for name in names if reaches(name, GROUND_LAYERS["hume.lib"])} == {
        "annotation.models", "annotation.models.Annotator", "kinds.kind_registry"}
