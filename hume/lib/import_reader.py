"""Reading import files line by line in bounded memory, with errors that say file, line and field.

Dataset and annotation imports share this: a file is never read whole, a line longer than
settings.MAX_IMPORT_LINE_BYTES is refused after reading at most that many bytes of it (the rest is skipped in
small chunks), and undecodable bytes are reported with their byte offset so a user can find them.
"""
from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, BinaryIO

from django.conf import settings

from hume.lib.json_errors import json_refusal

MAX_PROBLEMS = 20  # enough to fix a file in one go without flooding the page
SKIP_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ImportProblem:
    """One thing wrong with an import; `line` and `field` are None when the problem is not on a line."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file} line {self.line}"
        if self.field:
            where += f', field "{self.field}"' if self.line is not None else f', option "{self.field}"'
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ImportFailed(Exception):
    """The import was refused and rolled back; `problems` lists why (at most MAX_PROBLEMS, then a note)."""

    def __init__(self, problems: list[ImportProblem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


class ProblemLog:
    """Collects problems of one file so an import can report many at once and then refuse."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.problems: list[ImportProblem] = []
        self.more = 0

    def add(self, line: int | None, field: str | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(ImportProblem(self.filename, line, field, message))
        else:
            self.more += 1

    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def __bool__(self) -> bool:
        return bool(self.problems)

    def raise_if_any(self) -> None:
        if not self.problems:
            return
        problems = list(self.problems)
        if self.full:
            problems.append(ImportProblem(self.filename, None, None, f"stopped after {MAX_PROBLEMS} problems"))
        raise ImportFailed(problems)


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte in the file
    text: str  # decoded, line ending included


def read_lines(stream: BinaryIO, log: ProblemLog, *, stop_on_problem: bool = False) -> Iterator[Line]:
    """Decoded lines of a binary stream; an over-long or non-UTF-8 line is logged and skipped."""
    max_bytes = settings.MAX_IMPORT_LINE_BYTES
    if hasattr(stream, "seek"):
        stream.seek(0)
    number, offset = 0, 0
    while True:
        raw = stream.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        start = offset
        offset += len(raw)
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            offset += _skip_rest_of_line(stream)
            log.add(number, None, f"the line is longer than the limit of {max_bytes:,} bytes "
                                  f"(MAX_IMPORT_LINE_BYTES); it was not read")
        else:
            text = _decode(raw, number, start, log)
            if text is not None:
                yield Line(number, start, text)
                continue
        if stop_on_problem:
            return


def _skip_rest_of_line(stream: BinaryIO) -> int:
    """Consume the remainder of an over-long line in small chunks; returns the bytes skipped."""
    skipped = 0
    while True:
        chunk = stream.readline(SKIP_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def _decode(raw: bytes, number: int, start: int, log: ProblemLog) -> str | None:
    if number == 1 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
        start += len(codecs.BOM_UTF8)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 4].hex(" ")
        log.add(number, None, f"is not valid UTF-8: byte offset {start + exc.start} in the file "
                              f"(column {exc.start + 1} of the line, bytes {bad}); save the file as UTF-8")
        return None


def iter_jsonl(stream: BinaryIO, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line that parses as a JSON object."""
    for line in read_lines(stream, log):
        text = line.text.strip()
        if not text:
            continue
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long integer, deep nesting
            field, message = json_refusal(text, exc)
            log.add(line.number, field, message.replace(" (line 1, column", " (column"))
            continue
        if not isinstance(record, dict):
            log.add(line.number, None, f"each line must be a JSON object, got {type(record).__name__}")
            continue
        yield line.number, record


def iter_csv(stream: BinaryIO, log: ProblemLog, *, required: tuple[str, ...],
             allowed: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line number, {column: cell}) per CSV row; the header must name required columns only once."""
    csv.field_size_limit(max(csv.field_size_limit(), settings.MAX_IMPORT_LINE_BYTES))
    last = [0]

    def texts() -> Iterator[str]:
        for line in read_lines(stream, log, stop_on_problem=True):
            last[0] = line.number
            yield line.text

    reader = csv.reader(texts())
    try:
        header = next(reader, None)
        if header is None or log:
            return
        columns = [c.strip() for c in header]
        if not _header_ok(columns, required, allowed, log):
            return
        while True:
            start = last[0] + 1
            row = next(reader, None)
            if row is None:
                return
            if not row:
                continue
            if len(row) != len(columns):
                log.add(start, None, f"has {len(row)} cells but the header has {len(columns)} columns")
                continue
            yield start, dict(zip(columns, row, strict=True))
    except csv.Error as exc:
        log.add(last[0], None, f"is not valid CSV: {exc}")


def _header_ok(columns: list[str], required: tuple[str, ...], allowed: tuple[str, ...], log: ProblemLog) -> bool:
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    missing = [c for c in required if c not in columns]
    unknown = [c for c in columns if c not in allowed]
    if duplicates:
        log.add(1, duplicates[0], f"column {duplicates[0]!r} appears more than once in the header")
    if missing:
        log.add(1, missing[0], f"the header lacks the column(s) {', '.join(missing)}; "
                               f"the columns are {', '.join(allowed)}")
    if unknown:
        log.add(1, unknown[0], f"unknown column(s) {', '.join(unknown)}; the columns are {', '.join(allowed)}")
    return not (duplicates or missing or unknown)
