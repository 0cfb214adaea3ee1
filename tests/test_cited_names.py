"""Every name a docstring or a comment cites in backticks exists (issue 38 item 5; docs/style.md, "Naming").

A docstring that names a function which no longer exists sends a reader looking for it (split_rankings.py once
cited two functions by the names they had before a rename). So every cite that has the shape of
a code name is checked against what the project defines:

- a cite is ``name``, a dotted name or ``name()`` in single or double backticks, with an underscore, a dot,
  two round brackets or a capital letter in it (a plain lower-case word such as `auto` or `human` reads as a
  value as often as a name and is not checked; a cite with a space, a slash or an operator is a command, a
  path or an expression);
  a cite that ends in .py is a module's file name and must name one;
- the project's definitions come from the AST of every module the scan reads: module and package names,
  functions, classes, arguments, assigned names and attributes (model fields, settings, constants), keyword
  argument names, imported names, string keys of dict literals and subscripts (the JSON fields of reports and
  exports) and management command options (``--human-task`` and ``human_task``);
- a dotted cite whose first part is not the project's is resolved by importing it (``np.frombuffer``,
  ``kombu.Connection.collect``): an import alias used anywhere in the project (``np``) counts as its module;
- names of other libraries cited bare (``apply_async``) are in `LIBRARY_NAMES`, each with the dotted path the
  test imports, so a library rename fails here too; `WORDS` is the short list of cites that are not code names at
  all, each with its reason.

Tests are scanned as well as the app: a test's docstring is documentation too. Migrations are left out (Django
writes them).
"""
from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("annotation", "agreement", "tasks_app", "hume", "kinds", "measures", "tests", "bench", "demo", "scripts")
PROJECT_PACKAGES = {"annotation", "agreement", "tasks_app", "hume", "kinds", "measures", "tests", "bench", "demo"}

CITE = re.compile(r"``([^`\n]+)``|`([^`\n]+)`")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")

# Names of other libraries a comment cites bare, with where each lives (imported by the test, so it must exist).
LIBRARY_NAMES = {
    "apply_async": "celery.app.task.Task.apply_async",
    "send_task": "celery.Celery.send_task",
    "values_list": "django.db.models.QuerySet.values_list",
    "errors_": "crowdkit.aggregation.DawidSkene.errors_",
    "Message.ack_log_error": "kombu.message.Message.ack_log_error",
    "_evaluate_subset_cross_validation": "mteb.abstasks.classification.AbsTaskClassification"
                                         "._evaluate_subset_cross_validation",
}

# Cites that are not code names, each with its reason.
WORDS = {
    "HUME": "the paper's name (docs/architecture.md, Sources)",
    "POST": "an HTTP method",
    "MIRACLRetrieval": "an MTEB task name (a dataset, not code)",
    "e5_base": "an example of an untrusted model name that LaTeX must escape",
    "baseline__Human": "a folder name in MTEB's results layout (org__model)",
    "org__model": "MTEB's folder naming pattern for a model",
    "figure_N": "a pattern: figure_1 … figure_N",
    "insertion.essays": "a key pattern in the SAGE table (perturbation.dataset)",
    "recip_rank": "a trec_eval measure name",
    "ndcg_cut_k": "a trec_eval measure name pattern",
    "jsonb_to_recordset": "a PostgreSQL function",
    "_partial": "the template name suffix of an htmx fragment (docs/style.md, Views and pages)",
    "_create_dataloaders.py": "a file of mteb 2.x, cited for its text preprocessing",
    "self.connection.client.hostname": "kombu's attribute chain in the broker workaround's explanation",
}


def modules() -> list[Path]:
    """Every Python file of the project the scan reads, migrations left out."""
    paths = [path for root in ROOTS if (REPO / root).exists() for path in (REPO / root).rglob("*.py")]
    paths += list(REPO.glob("*.py"))
    return sorted(path for path in paths if "migrations" not in path.relative_to(REPO).parts)


def definitions(tree: ast.AST, names: set[str], aliases: dict[str, str], keys: bool = True) -> None:
    """Add every name `tree` defines to `names`, and its imports of other libraries to `aliases` (alias → module)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names.update(alias.name.split("."))
                if alias.name.split(".")[0] not in PROJECT_PACKAGES:
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names.add(alias.asname or alias.name)
                if node.level == 0 and node.module and node.module.split(".")[0] not in PROJECT_PACKAGES:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Dict) and keys:
            names.update(key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if isinstance(node.slice.value, str):
                names.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
                    names.update({arg.value, arg.value.lstrip("-"), arg.value.lstrip("-").replace("-", "_")})


def texts(source: str, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring and every comment of a module."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield node.body[0].lineno, docstring
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def resolve(dotted: str) -> bool:
    """Whether a dotted path of another library imports: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute) and attribute not in getattr(found, "__annotations__", {}):
                return False
            found = getattr(found, attribute, None)
        return True
    return False


def is_code_name(cite: str) -> bool:
    """A cite with the shape of a code name: an underscore, a dot, `()` or a capital in it."""
    return bool(NAME.fullmatch(cite)) and (any(mark in cite for mark in "_.()") or cite != cite.lower())


def cites() -> Iterator[tuple[str, int, str]]:
    for path in modules():
        source = path.read_text(encoding="utf-8")
        for line, text in texts(source, ast.parse(source)):
            for match in CITE.finditer(text):
                cite = (match.group(1) or match.group(2)).strip()
                if FILE.fullmatch(cite) or is_code_name(cite):
                    yield str(path.relative_to(REPO)), line, cite


def project() -> tuple[set[str], dict[str, str], set[str]]:
    names: set[str] = set()
    aliases: dict[str, str] = {}
    files = {path.name for root in ROOTS if (REPO / root).exists() for path in (REPO / root).rglob("*.py")}
    for path in modules():
        names.update(path.relative_to(REPO).with_suffix("").parts)
        # this file's allow-lists are no definitions: its dict keys are left out
        definitions(ast.parse(path.read_text(encoding="utf-8")), names, aliases, keys=path != Path(__file__).resolve())
    return names, aliases, files


def exists(cite: str, names: set[str], aliases: dict[str, str], files: set[str]) -> bool:
    if cite in WORDS:
        return True
    if FILE.fullmatch(cite):
        return cite in files
    cite = cite.removesuffix("()")
    if cite in LIBRARY_NAMES:
        return True
    if all(part in names for part in cite.split(".")):
        return True
    first, *rest = cite.split(".")
    if first in aliases and resolve(".".join([aliases[first], *rest])):
        return True
    return resolve(f"builtins.{cite}") or (first not in names and bool(rest) and resolve(cite))


def test_every_cited_name_exists() -> None:
    names, aliases, files = project()
    missing = [f"{path}:{line}: `{cite}`" for path, line, cite in cites() if not exists(cite, names, aliases, files)]
    assert not missing, "cited in a docstring or comment but defined nowhere:\n" + "\n".join(missing)


def test_the_library_names_and_their_paths_import() -> None:
    broken = [f"{name}: {path}" for name, path in LIBRARY_NAMES.items() if not resolve(path)]
    assert not broken, broken


def test_a_renamed_function_is_caught_and_words_are_not_checked() -> None:
    names, aliases, files = project()
    assert not exists("start_split_embedding_run", names, aliases, files)  # the name split_rankings.py once cited
    assert not exists("jobs.no_such_helper()", names, aliases, files)
    assert not exists("np.no_such_function", names, aliases, files)
    assert not exists("no_such_module.py", names, aliases, files)
    assert exists("start_split_embedding_ranking", names, aliases, files)
    assert exists("np.frombuffer", names, aliases, files)
    assert exists("Lease.kept()", names, aliases, files)
    assert exists("--human-task", names, aliases, files) or exists("human_task", names, aliases, files)
    assert not is_code_name("auto") and not is_code_name("python manage.py report") and is_code_name("KINDS")


def test_every_allowed_word_and_library_name_is_still_cited() -> None:
    cited = {cite.removesuffix("()") for _, _, cite in cites()}
    assert not (set(WORDS) | set(LIBRARY_NAMES)) - cited, "an allow-list entry nothing cites any more: drop it"
