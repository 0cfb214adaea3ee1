"""Whatever the code and docs cite lives in this repository (issue 21; docs/style.md).

A clone from a public host has only what is committed: no team notes beside the repository, no sibling
folders, no one's home directory. So no text file may point at a design or style note kept outside the
repository, at a folder above it, or at an absolute path on a machine; papers are cited by title and arXiv
id (docs/architecture.md, "Sources"). And every `docs/<page>.md` named in code or docs, and every relative
Markdown link between pages, must lead to a page (and heading) that exists.

The patterns below are written so that this file does not match them itself.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".md", ".html", ".txt", ".toml", ".ini", ".cfg", ".sh", ".js", ".css", ".yml", ".yaml"}
# Not the project's text: tool caches, environments, ignored output (.gitignore), vendored third-party code,
# and shared/ — the team's own folder, which some CI machines copy into the checkout; it is not committed.
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache", "var",
             "artifacts"}
SKIP_PATHS = {Path("static/vendor"), Path("shared")}

# (what it is, pattern): each names a document that a public clone does not have.
OUTSIDE = [
    ("the team's design note", re.compile(r"\bDESIGN(?:\.md|\s*§)")),
    ("the team's style note (the project's own is docs/style.md)", re.compile(r"\bSTYLE\.md")),
    ("a folder beside the repository", re.compile(r"\.\./shared\b")),
    ("the team's shared folder", re.compile(r"\bshared/(?:papers|data|hooks)\b")),
    ("a paper by its file name (cite title and arXiv id)", re.compile(r"\bpapers/\d{3}_|\b\d{3}_[0-9a-f]{16}\.txt")),
    ("an absolute path on one machine", re.compile(r"(?<![\w.:/~-])/(?:work|home|Users)/\w")),
]
DOC_MENTION = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)(?:#([\w-]+))?")
MD_LINK = re.compile(r"\]\((?!https?:|mailto:|/)([^)\s#]+\.md)(?:#([^)\s]+))?\)")


def text_files() -> Iterator[Path]:
    """The repository's text files: the suffixes above, and scripts without a suffix that start with #!."""
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        if any(part in SKIP_DIRS for part in rel.parts) or any(rel.is_relative_to(p) for p in SKIP_PATHS):
            continue
        if not path.is_file():
            continue
        if path.suffix in SUFFIXES or (not path.suffix and path.read_bytes()[:2] == b"#!"):
            yield path


def lines(path: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)


def where(path: Path, number: int) -> str:
    return f"{path.relative_to(REPO)} line {number}"


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for _, line in lines(page) if re.match(r"#{1,6} ", line)}


def test_the_scan_sees_the_code_docs_templates_and_scripts() -> None:
    seen = {str(p.relative_to(REPO)) for p in text_files()}
    assert {"README.md", "docs/architecture.md", "docs/style.md", "measures/metrics.py", "templates/base.html",
            "scripts/test", "ruff.toml", "pytest.ini"} <= seen
    assert not any(s.startswith(("static/vendor/", ".venv/", ".git/")) for s in seen)


def test_no_text_file_cites_a_document_outside_the_repository() -> None:
    found = [f"{where(path, n)}: {what}: {line.strip()[:140]}"
             for path in text_files() for n, line in lines(path)
             for what, pattern in OUTSIDE if pattern.search(line)]
    assert not found, "references to documents a public clone does not have:\n" + "\n".join(found)


def test_every_docs_page_named_in_code_or_docs_exists() -> None:
    missing = []
    for path in text_files():
        for n, line in lines(path):
            for match in DOC_MENTION.finditer(line):
                page = REPO / "docs" / match[1]
                if not page.is_file():
                    missing.append(f"{where(path, n)}: docs/{match[1]} does not exist")
                elif match[2] and match[2] not in anchors(page):
                    missing.append(f"{where(path, n)}: docs/{match[1]} has no heading #{match[2]}")
    assert not missing, "\n".join(missing)


def test_every_relative_markdown_link_leads_to_a_page_and_heading() -> None:
    broken = []
    for path in text_files():
        if path.suffix != ".md":
            continue
        for n, line in lines(path):
            for match in MD_LINK.finditer(line):
                page = (path.parent / match[1]).resolve()
                if not page.is_file() or not page.is_relative_to(REPO):
                    broken.append(f"{where(path, n)}: link to {match[1]}: no such page in the repository")
                elif match[2] and match[2] not in anchors(page):
                    broken.append(f"{where(path, n)}: link to {match[1]}#{match[2]}: no such heading")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("line", [
    "See " + "DESIGN" + " §3 for the protocol.",
    "(" + "STYLE" + ".md)",
    "../" + "shared/" + "papers/" + "000_x.txt",
    "the notes in shared" + "/data/",
    "the paper (papers/" + "001_*)",
    "the shared papers folder: 000_" + "e0c3edb1fd3fade8.txt",
    "read /" + "work/main/data",
    "cat /" + "home/someone/notes.md",
])
def test_each_kind_of_outside_reference_is_caught(line: str) -> None:
    assert any(pattern.search(line) for _, pattern in OUTSIDE)


@pytest.mark.parametrize("line", [
    "docs/style.md and docs/architecture.md",
    "https://example.org/home/page and https://github.com/embeddings-benchmark/mteb",
    "kappa_min_shared = pairs sharing fewer items; @shared_task",
    "SAGE, arXiv:2509.21310, Appendix A.6",
])
def test_the_project_s_own_references_pass(line: str) -> None:
    assert not any(pattern.search(line) for _, pattern in OUTSIDE)


def test_the_link_check_reads_pages_and_headings_as_github_does() -> None:
    mentioned = DOC_MENTION.finditer("see docs/reports.md and docs/" + "nope.md#x")
    assert [m.groups() for m in mentioned] == [("reports.md", None), ("nope.md", "x")]
    assert [m.groups() for m in MD_LINK.finditer("[a](metrics.md#charts) [b](https://x.org/y.md)")] == [
        ("metrics.md", "charts")]
    assert slug("Rules every change keeps") == "rules-every-change-keeps"
    assert {"sources", "rules-every-change-keeps", "the-task-kinds"} <= anchors(REPO / "docs" / "architecture.md")
