"""A SAGE study on disk: one folder per category, read whole and validated before anything runs.

Layout (docs/sage.md has the same with examples); every category folder is optional, a study needs one:

    DIR/human_preference/comparisons.jsonl  {"id", "source", "summary_a", "summary_b", "preferred": "a"|"b"|"tie"}
    DIR/human_preference/ratings.jsonl      {"id", "source", "summary", "ratings": {"overall": 6, "coverage": 5, ...}}
    DIR/robustness/<dataset>.jsonl          {"id", "text", "summary"}
    DIR/sensitivity/<dataset>.jsonl         {"id", "text"}
    DIR/clustering/<dataset>.jsonl          {"id", "texts": [...], "labels": [...]}   (one clustering set a line)
    DIR/retrieval/<dataset>/corpus.jsonl    {"_id", "title"?, "text"}                 (BEIR)
    DIR/retrieval/<dataset>/queries.jsonl   {"_id", "text"}
    DIR/retrieval/<dataset>/qrels/test.tsv  query-id <TAB> corpus-id <TAB> score, with a header line

Any error names the file, the line and the field, and nothing runs (`SageDataError`).
"""
from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from hume.lib.import_reader import ProblemLog, read_lines
from hume.lib.json_errors import json_refusal
from kinds.forms import excerpt


class SageDataError(ValueError):
    """A study file that cannot be used, with where and why."""

    def __init__(self, path: Path, line: int | None, field_name: str | None, message: str) -> None:
        where = f"{path}" + (f":{line}" if line else "") + (f": field '{field_name}'" if field_name else "")
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.field, self.reason = path, line, field_name, message

    def relative_to(self, root: Path) -> SageDataError:
        """The same error naming the file inside the study (an upload's files, not the server's folders)."""
        try:
            inside = Path(self.path).relative_to(root)
        except ValueError:
            inside = Path(Path(self.path).name)
        return SageDataError(Path(root.name) / inside if inside.parts else Path(root.name), self.line, self.field,
                             self.reason)


@dataclass
class Retrieval:
    corpus: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass
class Study:
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    ratings: list[dict[str, Any]] = field(default_factory=list)
    robustness: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    sensitivity: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    clustering: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    retrieval: dict[str, Retrieval] = field(default_factory=dict)


def _text(record: dict[str, Any], name: str, path: Path, line: int, *, optional: bool = False) -> str:
    value = record.get(name)
    if value is None and optional:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise SageDataError(path, line, name, "must be a non-empty string")
    return value


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a study file, read as dataset imports read theirs (hume/lib/import_reader.py): a
    line over MAX_IMPORT_LINE_BYTES or with a byte that is not UTF-8 is a SageDataError naming its line."""
    if not path.is_file():
        raise SageDataError(path, None, None, "missing")
    log = ProblemLog(path.name)
    with path.open("rb") as handle:
        for line in read_lines(handle, log, stop_on_problem=True):
            yield line.number, line.text
    if log:
        problem = log.problems[0]
        raise SageDataError(path, problem.line, problem.field, problem.message)


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; ids must be unique within the file."""
    rows, seen = [], set()
    for number, raw in _lines(path):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as error:
            raise SageDataError(path, number, None, f"not valid JSON ({error.msg})") from None
        except (ValueError, RecursionError) as error:  # an over-long integer, deep nesting
            field, message = json_refusal(raw, error)
            raise SageDataError(path, number, field, message) from None
        if not isinstance(record, dict):
            raise SageDataError(path, number, None, "each line must be a JSON object")
        key = "_id" if "_id" in record else "id"
        ident = record.get(key)
        if not isinstance(ident, str | int) or isinstance(ident, bool) or str(ident) == "":
            raise SageDataError(path, number, key, "must be a non-empty string or integer")
        if str(ident) in seen:
            raise SageDataError(path, number, key, f"duplicate id {excerpt(str(ident))!r}")
        seen.add(str(ident))
        record[key] = str(ident)
        rows.append((number, record))
    if not rows:
        raise SageDataError(path, None, None, "the file has no records")
    return rows


def read_comparisons(path: Path) -> list[dict[str, Any]]:
    out = []
    for line, r in _records(path):
        if r.get("preferred") not in ("a", "b", "tie"):
            raise SageDataError(path, line, "preferred", "must be 'a', 'b' or 'tie'")
        out.append({"id": r["id"], "source": _text(r, "source", path, line), "preferred": r["preferred"],
                    "summary_a": _text(r, "summary_a", path, line), "summary_b": _text(r, "summary_b", path, line)})
    return out


def read_ratings(path: Path) -> list[dict[str, Any]]:
    out = []
    for line, r in _records(path):
        ratings = r.get("ratings")
        if not isinstance(ratings, dict) or not ratings:
            raise SageDataError(path, line, "ratings", "must be an object of axis -> number")
        for axis, value in ratings.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise SageDataError(path, line, f"ratings.{axis}", "must be a finite number")
        out.append({"id": r["id"], "source": _text(r, "source", path, line),
                    "summary": _text(r, "summary", path, line), "ratings": dict(ratings)})
    return out


def read_documents(path: Path, *, summary: bool) -> list[dict[str, str]]:
    out = []
    for line, r in _records(path):
        doc = {"id": r["id"], "text": _text(r, "text", path, line)}
        if summary:
            doc["summary"] = _text(r, "summary", path, line)
        out.append(doc)
    return out


def read_clustering(path: Path) -> list[dict[str, Any]]:
    out = []
    for line, r in _records(path):
        texts, labels = r.get("texts"), r.get("labels")
        if not isinstance(texts, list) or len(texts) < 2 or not all(isinstance(t, str) and t.strip() for t in texts):
            raise SageDataError(path, line, "texts", "must be a list of at least two non-empty strings")
        if not isinstance(labels, list) or len(labels) != len(texts):
            raise SageDataError(path, line, "labels", f"must be a list of {len(texts)} labels, one per text")
        if not all(isinstance(x, str | int) and not isinstance(x, bool) for x in labels):
            raise SageDataError(path, line, "labels", "each label must be a string or an integer")
        out.append({"id": r["id"], "texts": texts, "labels": [str(x) for x in labels]})
    return out


def read_beir(folder: Path) -> Retrieval:
    corpus = {}
    for line, r in _records(folder / "corpus.jsonl"):
        title = _text(r, "title", folder / "corpus.jsonl", line, optional=True)
        corpus[r["_id"]] = f"{title} {_text(r, 'text', folder / 'corpus.jsonl', line)}".strip()
    queries = {r["_id"]: _text(r, "text", folder / "queries.jsonl", line)
               for line, r in _records(folder / "queries.jsonl")}
    return Retrieval(corpus, queries, _read_qrels(folder / "qrels" / "test.tsv", corpus, queries))


def _read_qrels(path: Path, corpus: dict[str, str], queries: dict[str, str]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    # A field may be as long as a line may be (csv's own limit is 131,072 characters), as in dataset imports.
    csv.field_size_limit(max(csv.field_size_limit(), settings.MAX_IMPORT_LINE_BYTES))
    for number, text in _lines(path):
        try:
            row = next(csv.reader([text], delimiter="\t"), [])
        except csv.Error as error:
            raise SageDataError(path, number, None, f"not a tab-separated line ({error})") from None
        if number == 1 or not row:
            continue  # BEIR's header: query-id, corpus-id, score
        if len(row) != 3:
            raise SageDataError(path, number, None, "expected query-id, corpus-id and score separated by tabs")
        qid, did, score = row
        if qid not in queries:
            raise SageDataError(path, number, "query-id", f"{excerpt(qid)!r} is not in queries.jsonl")
        if did not in corpus:
            raise SageDataError(path, number, "corpus-id", f"{excerpt(did)!r} is not in corpus.jsonl")
        try:
            qrels.setdefault(qid, {})[did] = int(score)
        except ValueError:
            raise SageDataError(path, number, "score", f"{excerpt(score)!r} is not an integer") from None
    if not qrels:
        raise SageDataError(path, None, None, "no judgments")
    return qrels


def _jsonl(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def load_study(root: Path) -> Study:
    """Read and validate every file of a study folder; raise SageDataError at the first bad line."""
    root = Path(root)
    if not root.is_dir():
        raise SageDataError(root, None, None, "is not a folder")
    study = Study()
    pref = root / "human_preference"
    if (pref / "comparisons.jsonl").exists():
        study.comparisons = read_comparisons(pref / "comparisons.jsonl")
    if (pref / "ratings.jsonl").exists():
        study.ratings = read_ratings(pref / "ratings.jsonl")
    study.robustness = {p.stem: read_documents(p, summary=True) for p in _jsonl(root / "robustness")}
    study.sensitivity = {p.stem: read_documents(p, summary=False) for p in _jsonl(root / "sensitivity")}
    study.clustering = {p.stem: read_clustering(p) for p in _jsonl(root / "clustering")}
    if (root / "retrieval").is_dir():
        study.retrieval = {d.name: read_beir(d) for d in sorted((root / "retrieval").iterdir()) if d.is_dir()}
    if not any(vars(study).values()):
        raise SageDataError(root, None, None, "holds no SAGE dataset (see agreement/sage/datasets.py for the layout)")
    return study
