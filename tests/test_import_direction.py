"""Imports follow the data (docs/architecture.md): annotation imports tasks_app, agreement imports both,
never the reverse; the settings package hume/ is the ground floor and imports no app (settings and urls
name them as strings). Below everything, the Django-free maths package measures/ imports no project package,
and the task kinds (kinds/, one folder per kind) import only measures/, Django and libraries: the apps look a
kind up in kinds/kind_registry.py, so data flows one way.

Inside the apps: no import cycle between modules and none between packages (a folder with __init__.py), no
management command imported as a library, and every package on its floor of the floor plan in docs/architecture.md
("The floor plan"): a package imports only its own floor's folder or floors below it, and peers on one floor never
import each other. agreement/ holds at most five Django-free modules: pure maths lives in measures/.

On the ground floor, the library layer (hume/lib/) and the job layer (hume/jobs/) import no app and no kind,
not even inside a function: every app may use them because they use none (docs/architecture.md, "The library
layer"). The library does not reach up into hume's own wiring either (URL trees, views, the job layer)."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
APPS = ("measures", "kinds", "hume", "tasks_app", "annotation", "agreement")
LATER_APPS = {"tasks_app": {"annotation", "agreement"}, "annotation": {"agreement"},
              "hume": {"tasks_app", "annotation", "agreement"},
              "measures": {"kinds", "hume", "tasks_app", "annotation", "agreement", "django", "rest_framework",
                           "celery"},
              "kinds": {"hume", "tasks_app", "annotation", "agreement"}}

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
    assert "agreement.core.reports" in graph["agreement.results.project"]  # from agreement.core.reports import ...
    assert "measures.metrics" in graph["agreement.results.project"]  # from measures import metrics as m
    assert "tasks_app.import_jobs" in graph["tasks_app.tasks"]  # from .import_jobs import run_import_job (relative)
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
# Packages: no cycle between them, each on its floor of docs/architecture.md's floor plan

ARCHITECTURE = REPO / "docs" / "architecture.md"
# Folders Django, Celery and the kind registry find by their place, which join the floor of the folder they are in.
BY_CONVENTION = {"management", "commands", "templatetags", "migrations"}


def package_of(module: str) -> str:
    return module if app_modules()[module].name == "__init__.py" else module.rpartition(".")[0]


def imported_modules(module: str, path: Path) -> Iterator[str]:
    """The app modules a module imports, where ``from a import b`` names the submodule a.b when there is one
    rather than the package a (importing a.b runs a/__init__.py whoever imports it, so that is no edge)."""
    modules = app_modules()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            yield from submodules
            if len(submodules) < len(node.names) and base in modules:
                yield base


@cache
def package_graph() -> dict[str, frozenset[str]]:
    """Package → the other packages its own modules import (not its sub-packages': they are packages too)."""
    edges: dict[str, set[str]] = {}
    for module, path in app_modules().items():
        package = package_of(module)
        edges.setdefault(package, set()).update(
            package_of(name) for name in imported_modules(module, path) if package_of(name) != package)
    return {package: frozenset(targets) for package, targets in edges.items()}


def test_the_package_graph_names_submodules_and_sees_deferred_imports() -> None:
    graph = package_graph()
    assert "agreement.core" in graph["agreement.results"]  # from agreement.core import scoring
    assert "hume" not in graph["hume.jobs"]  # from hume import jobs: the package hume.jobs, not the root
    assert "agreement" not in graph["agreement.core"]  # the root is the top floor
    assert "annotation.core" in graph["annotation.llm"]  # inside functions too


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph()
    found = cycles(graph)
    assert len(found) == 0, f"{len(found)} package cycle(s):\n" + "\n\n".join(describe(c, graph) for c in found)


def floor_plan(text: str) -> list[list[str]]:
    """The floors of docs/architecture.md's floor plan, top first: each line between the markers names a floor's
    folders (peers separated by commas) before two spaces and what they hold."""
    block = text.split("<!-- floor-plan -->", 1)[1].split("<!-- /floor-plan -->", 1)[0]
    floors = []
    for line in block.splitlines():
        folders = line.strip().strip("`").split("  ", 1)[0].strip()
        if folders and not folders.startswith("```"):
            floors.append([folder.strip().rstrip("/").replace("/", ".") for folder in folders.split(",")])
    return floors


@cache
def floors() -> dict[str, int]:
    """Folder of the plan (as a dotted package) → its floor, 0 the top."""
    return {folder: rank for rank, line in enumerate(floor_plan(ARCHITECTURE.read_text())) for folder in line}


def placed_in(package: str) -> str | None:
    """The plan's folder a package is on: itself, or for a folder found by its place, the nearest one above."""
    parts = package.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in floors():
            return candidate
        if parts[end - 1] not in BY_CONVENTION and not is_kind_folder(candidate):
            return None
    return None


def is_kind_folder(package: str) -> bool:
    return package.count(".") == 1 and package.startswith("kinds.")


def test_the_floor_plan_parses_folders_and_peers() -> None:
    text = "<!-- floor-plan -->\n```\na/  top\n  a/b/, a/c/   peers: b and c\na/d/\n```\n<!-- /floor-plan -->"
    assert floor_plan(text) == [["a"], ["a.b", "a.c"], ["a.d"]]


def test_every_folder_of_the_plan_is_a_package_and_every_package_is_on_the_plan() -> None:
    packages = set(package_graph())
    assert sorted(set(floors()) - packages) == []
    assert sorted(package for package in packages if placed_in(package) is None) == []


def test_a_package_imports_only_its_own_floor_or_floors_below() -> None:
    rank = floors()
    upward = sorted(f"{package} -> {target}" for package, targets in package_graph().items()
                    for target in targets
                    if placed_in(target) != placed_in(package) and rank[placed_in(target)] <= rank[placed_in(package)])
    assert upward == []


def test_the_plan_shows_agreement_floors_as_folders() -> None:
    """agreement's floors, as docs/architecture.md draws them: its wiring on top, the report core at the bottom."""
    rank = floors()
    assert rank["agreement"] < rank["agreement.ppi"] < rank["agreement.retrieval"] == rank["agreement.sage"] \
        == rank["agreement.escalation"] < rank["agreement.results"] < rank["agreement.model_runs"] \
        < rank["agreement.core"] < rank["annotation"]
    assert placed_in("agreement.management.commands") == "agreement"
    assert placed_in("agreement.model_runs.migrations") == "agreement.model_runs"
    assert placed_in("kinds.sts") == "kinds"


DJANGO_OR_APPS = {"django", "rest_framework", "celery", "hume", "tasks_app", "annotation", "kinds"}


def django_free_modules(app: str) -> list[str]:
    """Modules of an app that import neither Django nor any app, except other such modules (they could all move
    to measures/ together); package __init__ files, migrations and commands left out."""
    modules = {module: path for module, path in app_modules().items()
               if module.startswith(f"{app}.") and path.name != "__init__.py"
               and not {"migrations", "management"} & set(module.split("."))}
    free = {module for module, path in modules.items() if not imported_apps(path) & DJANGO_OR_APPS}
    changed = True
    while changed:
        keep = {module for module in free
                if all(name in free or name.startswith("measures") or app_modules()[name].name == "__init__.py"
                       for name in imported_modules(module, modules[module]))}
        changed, free = keep != free, keep
    return sorted(free)


def test_the_pure_maths_lives_in_measures() -> None:
    free = django_free_modules("agreement")
    assert len(free) <= 5, free
    assert "agreement.core.scoring" not in free and "agreement.core.report_document" in free  # the check sees both


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
