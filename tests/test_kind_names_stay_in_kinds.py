"""Issue 38, item 3: a kind carries its own samples and static files, so nothing outside its folder names it.

Two counts, both 0:

- kind names in the code of templates/ and static/: a template names a kind in a tag (`task.kind == "sts"`,
  `data-sts`), a script or style sheet anywhere; prose between tags may mention a kind.
- lists of the kinds in the test files (tests/, every .py): one literal — list, tuple, set, or dict keys —
  naming three or more registered kinds, or one file comparing constants against three or more kinds
  (`kind == "sts"`, `"likert" != kind`). Naming one or two kinds is an example (a task of one kind showing
  a generic rule, or a test of that kind, such as tests/test_kind_sts_*.py); three is a table of kinds, which
  a new kind would have to join. A generic test iterates the registry instead and reads each kind's data
  from its samples (kinds/<name>/samples.py, tests/kind_samples.py).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from kinds.kind_registry import KINDS
from kinds.samples import KindSamples

REPO = Path(__file__).resolve().parent.parent
NAMES = sorted(KINDS)
LISTING = 3  # kinds named in one literal (or one file's comparisons) that make a list of the kinds
IN_A_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|<[^>]*>", re.S)  # template code, not the prose between tags
ANY_NAME = "(" + "|".join(NAMES) + ")"
IN_TEMPLATE = re.compile(r"(?<![\w.])" + ANY_NAME + r"(?!\w)", re.I)  # `found.pairwise` is a field, not the kind
IN_STATIC = re.compile(r"(?<!\w)" + ANY_NAME + r"(?!\w)", re.I)
# Test files whose kind lists are not yet each kind's own; this only shrinks.
NOT_YET: set[str] = set()


def names_in_templates_and_static() -> list[str]:
    found = []
    for path in sorted((REPO / "templates").rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        for tag in IN_A_TAG.finditer(text):
            for name in IN_TEMPLATE.finditer(tag.group()):
                line = text.count("\n", 0, tag.start() + name.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {name.group()}")
    for path in sorted((REPO / "static").rglob("*")):
        if path.suffix in (".js", ".css", ".html", ".svg"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                found += [f"{path.relative_to(REPO)}:{number}: {name.group()}" for name in IN_STATIC.finditer(line)]
    return found


def kind_lists(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """(line, names) of every literal naming LISTING or more kinds, and of the file's comparisons against kind
    names if they name LISTING or more."""
    found, compared = [], {}
    for node in ast.walk(tree):
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set) and elements:
            names = sorted({e.value for e in elements if isinstance(e, ast.Constant) and e.value in KINDS})
            if len(names) >= LISTING:
                found.append((node.lineno, names))
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Constant) and operand.value in KINDS:
                    compared.setdefault(operand.value, node.lineno)
    if len(compared) >= LISTING:
        found.append((min(compared.values()), sorted(compared)))
    return found


def kind_lists_in_tests() -> dict[str, list[tuple[int, list[str]]]]:
    found = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        lists = kind_lists(ast.parse(path.read_text(encoding="utf-8")))
        if lists:
            found[str(path.relative_to(REPO))] = lists
    return found


def test_no_template_or_static_file_names_a_kind() -> None:
    assert names_in_templates_and_static() == []


def test_no_test_file_lists_the_kinds() -> None:
    found = kind_lists_in_tests()
    assert {path: lists for path, lists in found.items() if path not in NOT_YET} == {}
    assert set(found) == NOT_YET  # a file that no longer lists the kinds leaves NOT_YET


def test_every_kind_carries_its_samples() -> None:
    """A kind without samples would drop out of every generic test unseen (SampleTable leaves it out)."""
    assert all(isinstance(getattr(kind, "samples", None), KindSamples) for kind in KINDS.values())
    assert all(kind.samples.records and kind.samples.import_records for kind in KINDS.values())


def test_the_counts_see_what_they_look_for() -> None:
    """Guards the test itself: the patterns find a kind named the ways that were removed."""
    assert IN_TEMPLATE.findall('{% if task.kind == "sts" %}<div class="x" data-clustering>') == ["sts", "clustering"]
    assert IN_TEMPLATE.findall("{% for p in found.pairwise %}") == []
    assert IN_STATIC.findall(".sts { margin-top:1rem; }") == ["sts"]
    listed = ast.parse(f"KINDS = {NAMES!r}\nif kind == 'x': pass")
    assert kind_lists(listed) == [(1, NAMES)]
    chain = "\n".join(f"if kind == {name!r}: pass" for name in NAMES[:LISTING])
    assert kind_lists(ast.parse(chain)) == [(1, sorted(NAMES[:LISTING]))]
    assert kind_lists(ast.parse(f"EXAMPLES = {NAMES[:LISTING - 1]!r}")) == []  # one or two kinds: examples
    assert kind_lists(ast.parse(f"@parametrize('kind', {NAMES[:LISTING]!r})\ndef f(kind): pass"))[0][0] == 1
