"""One module name per meaning in the app code (issue 21 item 5; docs/style.md, "Naming").

A name that several files share (four runs.py, three registry.py) makes a traceback, a grep or a review
point at the wrong file, and it hid that the files meant different things (a TREC ranking, a job, an LLM
batch). So no module file name may repeat across `annotation`, `agreement`, `tasks_app`, `hume`, `kinds` and
`measures` (management commands included, migrations not), except the conventional names that docs/style.md
lists — Django's, which hold the same kind of thing in every package, and the parts of a kind folder, which
may repeat only under `kinds/`. The allow-lists are read from docs/style.md, so the page and the test cannot
drift apart.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
APP_ROOTS = ("annotation", "agreement", "tasks_app", "hume", "kinds", "measures")
STYLE = REPO / "docs" / "style.md"


def documented(list_name: str) -> set[str]:
    """The backticked names between `<!-- module-names:LIST -->` and its closing marker in docs/style.md."""
    text = STYLE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- module-names:{list_name} -->(.*?)<!-- /module-names:{list_name} -->", text, re.S)
    assert found, f"docs/style.md: no module-names:{list_name} list (the allow-list this test reads)"
    return set(re.findall(r"`(\w+)`", found.group(1)))


DJANGO = documented("django")
KIND_PARTS = documented("kind-parts")


def app_modules() -> list[Path]:
    """Every module file of the app code, relative to the repository, migrations left out."""
    return sorted(path.relative_to(REPO) for root in APP_ROOTS for path in (REPO / root).rglob("*.py")
                  if "migrations" not in path.relative_to(REPO).parts)


def allowed(path: Path) -> bool:
    """A conventional name: Django's anywhere, a kind folder's part only under kinds/."""
    return path.stem in DJANGO or (path.stem in KIND_PARTS and path.parts[0] == "kinds")


def repeated_names(paths: list[Path]) -> dict[str, list[str]]:
    """Each name that more than one module uses (conventional uses set aside), with the files that use it."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        if not allowed(path):
            by_name[path.stem].append(str(path))
    kinds_parts = {path.stem for path in paths if path.stem in KIND_PARTS and path.parts[0] == "kinds"}
    for name in kinds_parts:  # a kind part's name used outside kinds/ clashes with the kinds' own
        if by_name.get(name):
            by_name[name].append(f"kinds/**/{name}.py")
    return {name: files for name, files in sorted(by_name.items()) if len(files) > 1}


def test_the_scan_sees_every_app_and_leaves_migrations_out() -> None:
    seen = {str(path) for path in app_modules()}
    assert {"measures/metrics.py", "kinds/sts/scorer.py", "agreement/core/scoring.py", "tasks_app/kind_parts.py",
            "hume/settings.py", "annotation/core/views.py", "agreement/management/commands/report.py"} <= seen
    assert not any("/migrations/" in name for name in seen)
    assert len(seen) > 200


def test_the_allow_lists_are_the_conventional_names_docs_style_lists() -> None:
    assert DJANGO == {"__init__", "views", "urls", "models", "apps", "admin", "forms", "serializers", "signals",
                      "tasks", "api", "api_urls", "migrations", "kind_parts"}
    assert KIND_PARTS == {"definition", "form", "prompt", "scorer", "evaluation", "samples"}


def test_no_module_name_is_used_twice_in_the_app_code() -> None:
    repeats = repeated_names(app_modules())
    assert not repeats, "module names used by more than one file (rename all but one, docs/style.md):\n" + "\n".join(
        f"  {name}.py: {', '.join(files)}" for name, files in repeats.items())


def test_the_check_catches_a_repeated_name_and_a_kind_part_outside_kinds() -> None:
    paths = [Path("agreement/runs.py"), Path("annotation/runs.py"), Path("agreement/views.py"),
             Path("annotation/core/views.py"), Path("kinds/sts/scorer.py"), Path("kinds/likert/scorer.py"),
             Path("agreement/retrieval/scorer.py"), Path("measures/metrics.py")]
    assert repeated_names(paths) == {
        "runs": ["agreement/runs.py", "annotation/runs.py"],
        "scorer": ["agreement/retrieval/scorer.py", "kinds/**/scorer.py"],
    }
