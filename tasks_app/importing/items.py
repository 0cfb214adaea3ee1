"""Importing a dataset file into a task: the one function behind the CLI, the upload page and the API.

Validation and insertion happen in a single pass inside one transaction: records are parsed by the task's
kind (kinds.py), checked against the file so far and the database, and new items are bulk-inserted in
chunks. The first problem stops all writing; later lines are still checked so the user gets up to
MAX_PROBLEMS errors at once; then the transaction rolls back, so a bad file leaves nothing — not even the
Task row. An item's uid is a digest of task name, kind and payload, so importing a file again adds nothing.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any, BinaryIO, NamedTuple

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from hume.lib.import_reader import ImportFailed, ImportProblem, ProblemLog, iter_csv, iter_jsonl
from hume.lib.sql import insert_rows
from tasks_app.core import limits
from tasks_app.core.kinds import (
    KINDS,
    STRATA_FIELDS,
    ParsedRecord,
    ValidationProblem,
    canonical_json,
    content_digest,
    read_strata,
)
from tasks_app.core.models import Item, ItemCheck, ItemGold, Task

from .options import ImportOptions, parse_options

CHUNK = 2000
METADATA_FIELDS = ("instructions", "mteb_task_name", "mteb_subset", "dataset_revision")


@dataclass(frozen=True)
class ImportSummary:
    """What an import did, for the command's output, the upload page and the API's 201 body."""

    task_id: int
    task: str
    kind: str
    language: str
    created_task: bool
    added: int
    added_with_gold: int
    unchanged: int
    gold_updated: int
    labels: list[str]
    updated_fields: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        head = "created task" if self.created_task else "task exists:"
        out = [f"{head} {self.task!r} ({self.kind}, {self.language})",
               f"{self.added} added ({self.added_with_gold} with gold), {self.unchanged} unchanged"]
        if self.gold_updated:
            out.append(f"gold updated on {self.gold_updated} items")
        if self.labels:
            out.append(f"labels: {', '.join(self.labels)}")
        if self.updated_fields:
            out.append(f"updated: {', '.join(self.updated_fields)}")
        return out + [f"warning: {w}" for w in self.warnings]


def file_format(filename: str, options: ImportOptions) -> str:
    return options.file_format or ("csv" if filename.lower().endswith(".csv") else "jsonl")


def import_task(stream: BinaryIO, filename: str, options: ImportOptions) -> ImportSummary:
    """Import `stream` (binary, read line by line) into the task named in `options`; atomic.

    Raises ImportFailed with every problem found (file, line, field, message) and leaves the database as it was.
    """
    log = ProblemLog(filename)
    fmt = file_format(filename, options)
    if fmt == "csv" and not KINDS[options.kind].csv_fields:
        log.add(None, "format", f"CSV is not supported for {options.kind} tasks (nested fields): use JSONL")
        log.raise_if_any()
    try:
        with transaction.atomic():
            return _import(stream, fmt, options, log)
    except IntegrityError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ImportFailed([ImportProblem(
            filename, None, None, "the database refused the import, probably because another import of this task "
            f"ran at the same time; nothing was imported, try again ({reason})")]) from exc


def _import(stream: BinaryIO, fmt: str, options: ImportOptions, log: ProblemLog) -> ImportSummary:
    task, created, updated = _prepare_task(options, log)
    log.raise_if_any()
    writer = ItemWriter(task, created=created, update_gold=options.update_gold, log=log)
    for line, record in _records(stream, fmt, task, log):
        writer.add(line, record)
        if log.full:
            break
    writer.flush()
    if not writer.seen and not log:
        log.add(None, None, "the file has no items")
    _settle_labels(task, writer, log)
    log.raise_if_any()
    warnings = []
    if task.sample_size is not None and writer.added:
        warnings.append(f"the task has a sample of {task.sample_size} items and the {writer.added} new items are "
                        "not in it; run sample_task again to draw from all items")
    return ImportSummary(
        task_id=task.pk, task=task.name, kind=task.kind, language=task.language, created_task=created,
        added=writer.added, added_with_gold=writer.added_with_gold, unchanged=writer.unchanged,
        gold_updated=writer.gold_updated, labels=list(task.labels), updated_fields=updated, warnings=warnings,
    )


def _records(stream: BinaryIO, fmt: str, task: Task, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    if fmt == "jsonl":
        return iter_jsonl(stream, log)
    kind = task.kind_definition
    axes = tuple(task.axes) if kind.needs_axes else ()
    required = tuple(c for c in kind.csv_fields if c not in kind.csv_gold_columns)
    return iter_csv(stream, log, required=required, allowed=("id", *kind.csv_fields, *axes, *STRATA_FIELDS))


# --- the task row ------------------------------------------------------------------------------------------

def _prepare_task(options: ImportOptions, log: ProblemLog) -> tuple[Task, bool, list[str]]:
    """The task to import into: created when new, else checked to have the same shape (locked for the import)."""
    task = Task.objects.select_for_update().filter(name=options.name).first()
    if task is None:
        return _create_task(options, log), True, []
    _check_same_shape(task, options, log)
    return task, False, _update_metadata(task, options)


def _create_task(options: ImportOptions, log: ProblemLog) -> Task:
    if KINDS[options.kind].needs_axes and not options.axes:
        log.add(None, "axes", "a likert task needs its axes, e.g. overall,accuracy,coverage,coherence")
    lo, hi = options.scale or (None, None)
    task = Task(
        name=options.name, kind=options.kind, language=options.language, labels=options.labels or [],
        scale_min=lo, scale_max=hi, scale_step=options.step, axes=options.axes or [],
        **{name: getattr(options, name) or "" for name in METADATA_FIELDS},
    )
    try:
        task.full_clean()
    except ValidationError as exc:
        for name, messages in exc.message_dict.items():
            log.add(None, None if name == NON_FIELD_ERRORS else name, " ".join(messages))
    if not log:
        task.save()
    return task


def _check_same_shape(task: Task, options: ImportOptions, log: ProblemLog) -> None:
    """Items of one task share one configuration, so a re-import may not silently change it."""
    lo, hi, step = task.scale
    stored = {"kind": task.kind, "language": task.language, "labels": task.labels, "scale": (lo, hi),
              "step": step, "axes": task.axes}
    given = {"kind": options.kind, "language": options.language, "labels": options.labels,
             "scale": options.scale, "step": options.step, "axes": options.axes}
    for name, value in given.items():
        if value is not None and value != stored[name]:
            log.add(None, name, f"task {task.name!r} already exists with {name} {stored[name]!r}, this import "
                                f"gives {value!r}; import into a new task name or change the task first")


def _update_metadata(task: Task, options: ImportOptions) -> list[str]:
    changed = [name for name in METADATA_FIELDS
               if getattr(options, name) is not None and getattr(options, name) != getattr(task, name)]
    for name in changed:
        setattr(task, name, getattr(options, name))
    if changed:
        task.save(update_fields=[*changed, "updated_at"])
    return changed


def _settle_labels(task: Task, writer: ItemWriter, log: ProblemLog) -> None:
    """A classification task without --labels takes the sorted set of gold labels in the file."""
    if not task.kind_definition.needs_labels or task.labels:
        return
    if not writer.labels:
        log.add(None, "labels", "no label set: give the labels (e.g. --labels pos,neg) or gold labels in the file")
        return
    task.labels = sorted(writer.labels)
    task.save(update_fields=["labels", "updated_at"])


# --- the items ---------------------------------------------------------------------------------------------

class Pending(NamedTuple):
    line: int
    uid: str
    external_id: str
    payload: dict[str, Any]
    gold: Any
    strata: dict[str, str]
    check: CheckSpec | None = None


class CheckSpec(NamedTuple):
    """A record's `check` field: the item is an attention check or a practice item (docs/import.md)."""

    role: str
    expected: Any
    feedback: str


def read_check(record: dict[str, Any], task: Task, payload: dict[str, Any]) -> CheckSpec | None:
    """The record's `check` object, validated: `expected` must be a valid answer to the item (the kind's own
    answer check names the field), `role` attention (the default) or practice, `feedback` a string."""
    check = record.get("check")
    if check is None:
        return None
    if not isinstance(check, dict):
        raise ValidationProblem("check", f"must be an object such as {{\"expected\": ...}}, got {type(check).__name__}")
    unknown = sorted(set(check) - {"expected", "role", "feedback"})
    if unknown:
        raise ValidationProblem(f"check.{unknown[0]}", "unknown field; a check has expected, role and feedback")
    if "expected" not in check:
        raise ValidationProblem("check.expected", "is required: the answer the check expects")
    role = check.get("role", ItemCheck.Role.ATTENTION)
    if role not in ItemCheck.Role.values:
        raise ValidationProblem("check.role", f"must be one of {', '.join(ItemCheck.Role.values)}, got {role!r}")
    feedback = check.get("feedback", "")
    if not isinstance(feedback, str) or len(feedback) > 2000:
        raise ValidationProblem("check.feedback", "must be a string of at most 2000 characters")
    try:
        expected = task.validate_answer(check["expected"], payload)
    except ValidationProblem as problem:
        raise ValidationProblem(f"check.expected ({problem.field})", problem.message) from None
    return CheckSpec(role, expected, feedback)


class Stored(NamedTuple):
    id: int
    task_id: int
    uid: str
    external_id: str
    gold: Any


class ItemWriter:
    """Checks each record against the file so far and the database, and inserts new items in chunks."""

    def __init__(self, task: Task, *, created: bool, update_gold: bool, log: ProblemLog) -> None:
        self.task, self.kind, self.created, self.update_gold, self.log = (
            task, task.kind_definition, created, update_gold, log)
        self.line_of_uid: dict[str, int] = {}
        self.line_of_id: dict[str, int] = {}
        self.pending: list[Pending] = []
        self.labels: set[str] = set()
        last = None if created else Item.objects.filter(task=task).aggregate(m=Max("position"))["m"]
        self.position = 0 if last is None else last + 1
        self.added = self.added_with_gold = self.unchanged = self.gold_updated = 0

    @property
    def seen(self) -> int:
        return len(self.line_of_uid)

    def add(self, line: int, record: dict[str, Any]) -> None:
        try:
            limits.check_record(record)
            parsed = self.kind.parse_record(record, self.task)
            strata = read_strata(record)
            check = read_check(record, self.task, parsed.payload)
            uid = self._uid(parsed, strata)
        except ValidationProblem as problem:
            self.log.add(line, problem.field, problem.message)
            return
        external_id = parsed.external_id or content_digest(self.task.kind, parsed.payload)[:16]
        if not self._first_time(line, uid, external_id):
            return
        self.labels.update(self.kind.gold_labels(parsed.gold))
        self.pending.append(Pending(line, uid, external_id, parsed.payload, parsed.gold, strata, check))
        if len(self.pending) >= CHUNK:
            self.flush()

    def _uid(self, parsed: ParsedRecord, strata: dict[str, str]) -> str:
        """content_digest(task name, kind, payload[, system and group]); the serialisation also reveals unstorable
        text cheaply. Two systems' identical outputs are two items; an item without strata keeps its old uid."""
        check_storable(parsed, self.kind.name, payload=False)
        text = canonical_json([self.task.name, self.task.kind, parsed.payload, *([strata] if strata else [])])
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:
            encoded = None
        if encoded is None or "\\u0000" in text:  # json escapes NUL as \u0000: find the field
            check_storable(parsed, self.kind.name)
        if encoded is None:
            raise ValidationProblem("name", "the task name cannot be stored (invalid characters)")
        return hashlib.sha256(encoded).hexdigest()

    def _first_time(self, line: int, uid: str, external_id: str) -> bool:
        if len(external_id) > 200:
            self.log.add(line, "id", "must be at most 200 characters")
            return False
        if uid in self.line_of_uid:
            self.log.add(line, None, f"duplicate item: the same content as line {self.line_of_uid[uid]}")
            return False
        if external_id in self.line_of_id:
            self.log.add(line, "id", f"duplicate id {external_id!r} (first on line {self.line_of_id[external_id]})")
            return False
        self.line_of_uid[uid] = line
        self.line_of_id[external_id] = line
        return True

    def flush(self) -> None:
        chunk, self.pending = self.pending, []
        if not chunk:
            return
        by_uid, ids = self._stored(chunk)
        new, gold_changes = [], []
        for record in chunk:
            stored = by_uid.get(record.uid)
            if stored is not None:
                self._compare(record, stored, gold_changes)
            elif record.external_id in ids:
                self.log.add(record.line, "id", f"id {record.external_id!r} already exists in task "
                                                f"{self.task.name!r} with different content")
            else:
                new.append(record)
        if self.log:  # the import will roll back: only keep checking
            return
        self._insert(new)
        self._set_gold(gold_changes)

    def _stored(self, chunk: list[Pending]) -> tuple[dict[str, Stored], set[str]]:
        """Items of this chunk already in the database, by uid (any task) and external id (this task)."""
        # Separate indexed lookups: an OR-ed query, or one joining the gold table, scans a whole table per chunk.
        found = list(Item.objects.filter(uid__in=[r.uid for r in chunk]).order_by()
                     .values_list("id", "task_id", "uid", "external_id"))
        gold = dict(ItemGold.objects.filter(item_id__in=[row[0] for row in found]).values_list("item_id", "value"))
        rows = [Stored(*row, gold.get(row[0])) for row in found]
        ids: set[str] = set()
        if not self.created:
            ids = set(Item.objects.filter(task=self.task, external_id__in=[r.external_id for r in chunk]).order_by()
                      .values_list("external_id", flat=True))
        return {r.uid: r for r in rows}, ids

    def _compare(self, record: Pending, stored: Stored, gold_changes: list[tuple[int, Any]]) -> None:
        if stored.task_id != self.task.pk:
            self.log.add(record.line, None, "the same content is already an item of another task (was the task "
                                            "renamed?)")
        elif stored.external_id != record.external_id:
            self.log.add(record.line, "id", f"this content was imported before with id {stored.external_id!r}")
        elif canonical_json(stored.gold) == canonical_json(record.gold):
            self.unchanged += 1
        elif self.update_gold:
            gold_changes.append((stored.id, record.gold))
        else:
            self.log.add(record.line, self.kind.gold_field,
                         f"the gold {_short(record.gold)} differs from the stored gold {_short(stored.gold)}; "
                         "gold is never changed silently: re-import with --update-gold (update_gold) to change it")

    def _insert(self, new: list[Pending]) -> None:
        if not new:
            return
        prep = Item._meta.get_field("payload").get_db_prep_save
        now = Item._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
        insert_rows(Item, ("task", "uid", "external_id", "position", "payload", "system", "group", "in_sample",
                           "created_at"), [
            (self.task.pk, r.uid, r.external_id, self.position + i, prep(r.payload, connection),
             r.strata.get("system", ""), r.strata.get("group", ""), False, now)
            for i, r in enumerate(new)])
        ids = dict(Item.objects.filter(uid__in=[r.uid for r in new]).order_by().values_list("uid", "id"))
        prep = ItemGold._meta.get_field("value").get_db_prep_save
        golds = [(ids[r.uid], prep(r.gold, connection)) for r in new if r.gold is not None]
        insert_rows(ItemGold, ("item", "value"), golds)
        ItemCheck.objects.bulk_create(ItemCheck(item_id=ids[r.uid], role=r.check.role, expected=r.check.expected,
                                                feedback=r.check.feedback) for r in new if r.check is not None)
        self.position += len(new)
        self.added += len(new)
        self.added_with_gold += len(golds)

    def _set_gold(self, changes: list[tuple[int, Any]]) -> None:
        """--update-gold: gold follows the file (set, changed, or removed when the file has none)."""
        for item_id, gold in changes:
            if gold is None:
                ItemGold.objects.filter(item_id=item_id).delete()
            else:
                ItemGold.objects.update_or_create(item_id=item_id, defaults={"value": gold})
        self.gold_updated += len(changes)


def _short(value: Any, limit: int = 80) -> str:
    text = "none" if value is None else canonical_json(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_storable(parsed: ParsedRecord, kind: str, *, payload: bool = True) -> None:
    """The database cannot store NUL characters or unpaired surrogates; name the field instead of crashing later."""
    values = [("id", parsed.external_id), (KINDS[kind].gold_field, parsed.gold)]
    values += [("", parsed.payload)] if payload else []
    for path, text in (pair for root, value in values for pair in _strings(value, root)):
        if "\x00" in text:
            raise ValidationProblem(path or "text", "contains a NUL character")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationProblem(path or "text", "contains an unpaired surrogate (a broken \\ud800-style "
                                                    "escape)") from None


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, entry in value.items():
            yield path, str(key)
            yield from _strings(entry, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, entry in enumerate(value):
            yield from _strings(entry, f"{path}[{i}]")


def import_upload(upload: Any, raw_options: Mapping[str, Any]) -> ImportSummary:
    """The upload page, Django admin and the API: the CLI's option parsing and import, on an uploaded file."""
    filename = PurePath(upload.name or "upload").name
    return import_task(upload, filename, parse_options(raw_options, filename))
