"""Importing annotations made elsewhere (another tool, an earlier study, an LLM run) into a task.

Each value is validated exactly as a browser submit is (task.validate_answer), annotators are created on first
sight (a user with an unusable password, so nobody can log in as them), and the whole file is one transaction:
a bad line imports nothing. One annotation per (item, annotator): the same file imported twice stores each
answer once; a different answer is refused unless `replace`, which keeps the old one in AnnotationRevision.

When an answer was given is the line's `submitted_at` (an ISO 8601 time with its time zone, not later than the
import), else the moment of the import, one time for the whole file: the file's line order never becomes an
order of the answers. PPI's confidence sequence reads answers in time order and breaks ties by a digest of the
item's id (agreement/ppi/ppi_loading.py; docs/ppi.md, "Stopping"), so a file sorted by value and the same file
shuffled give the same sequence.

Lines marked `"excluded": true` (the answers export marks an excluded annotator's answers so) import as answers
of an excluded annotator: one not yet excluded here is excluded with the file's reason, so a moved study counts
what it counted before (docs/crowd.md, "Exclusion"); an exclusion made here is never undone by a file.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.core.annotators import create_annotator
from annotation.core.assignment import recount_answers
from annotation.core.signals import annotations_imported
from annotation.crowd.participants import exclude_annotator
from annotation.models import Annotation, AnnotationRevision, Annotator, Batch
from hume.lib.import_reader import ImportFailed, ImportProblem, ProblemLog, iter_jsonl
from tasks_app.core.kinds import ValidationProblem, canonical_json, id_string
from tasks_app.models import Item, Task

CHUNK = 1000
MAX_TIME_MS = 2**31 - 1
IMPORTED_EXCLUSION = "excluded where the answers were exported"  # the reason when a line gives none
ANNOTATOR_AGENTS = (Annotator.Agent.HUMAN, Annotator.Agent.LLM)
# The field's old name, still read (docs/import.md, "Importing annotations made elsewhere").
DEPRECATED_AGENT_FIELD = "annotator_kind"


@dataclass(frozen=True)
class AnnotationImportSummary:
    task: str
    added: int
    unchanged: int
    replaced: int
    annotators_created: list[str] = field(default_factory=list)
    annotators_excluded: list[str] = field(default_factory=list)  # excluded here by the file's "excluded" lines

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        out = [f"task {self.task!r}: {self.added} added, {self.unchanged} unchanged, {self.replaced} replaced"]
        if self.annotators_created:
            out.append(f"created annotators: {', '.join(self.annotators_created)}")
        if self.annotators_excluded:
            out.append(f"excluded annotators (as in the file): {', '.join(self.annotators_excluded)}")
        return out


@dataclass(frozen=True)
class Row:
    """One line of the file, checked for shape (not yet against the database)."""

    line: int
    item: str
    annotator: str
    annotator_agent: str
    value: Any
    skipped: bool
    skip_reason: str
    flag_comment: str
    time_spent_ms: int | None
    batch: str | None
    confidence: float | None = None
    submitted_at: datetime | None = None
    excluded: bool = False
    excluded_reason: str = ""


def import_annotations(stream: BinaryIO, filename: str, task: Task, *, replace: bool = False
                       ) -> AnnotationImportSummary:
    """Import a JSONL file of annotations into `task`; raises ImportFailed (nothing stored) on any problem."""
    log = ProblemLog(filename)
    try:
        with transaction.atomic():
            writer = AnnotationWriter(task, replace=replace, log=log)
            for line, record in iter_jsonl(stream, log):
                writer.add(line, record)
                if log.full:
                    break
            writer.flush()
            if not writer.seen and not log:
                log.add(None, None, "the file has no annotations")
            log.raise_if_any()
            for batch in {b for b in writer.batches.values() if b is not None}:
                recount_answers(batch)  # answers written outside the engine: keep its overlap cache exact
            excluded = writer.exclude_marked()
            if writer.added or writer.replaced:
                annotations_imported.send(sender=Annotation, task_id=task.pk)
    except IntegrityError as exc:
        raise ImportFailed([ImportProblem(filename, None, None, "the database refused the import, probably because "
                                          f"the same answers were stored meanwhile; nothing was imported ({exc})")]
                           ) from exc
    return AnnotationImportSummary(task.name, writer.added, writer.unchanged, writer.replaced, writer.created,
                                   excluded)


def parse_row(line: int, record: dict[str, Any], now: datetime | None = None) -> Row:
    """The fields of one line, or ValidationProblem naming the field; `now` is the import's time (a
    `submitted_at` later than it is refused)."""
    skipped = record.get("skipped", False)
    if not isinstance(skipped, bool):
        raise ValidationProblem("skipped", f"must be true or false, got {skipped!r}")
    value = record.get("value")
    if skipped and value is not None:
        raise ValidationProblem("value", "a skipped annotation has no value")
    if not skipped and value is None:
        raise ValidationProblem("value", "is required (or \"skipped\": true)")
    agent = annotator_agent(record)
    excluded = record.get("excluded", False)
    if not isinstance(excluded, bool):
        raise ValidationProblem("excluded", f"must be true or false, got {excluded!r}")
    excluded_reason = _text(record, "excluded_reason", 500)
    if excluded_reason and not excluded:
        raise ValidationProblem("excluded_reason", "only an excluded answer (\"excluded\": true) carries one")
    return Row(line, id_string(record.get("item"), "item"), _username(record.get("annotator")), agent, value,
               skipped, _text(record, "skip_reason", 500), _text(record, "flag_comment", 10_000),
               _time_spent(record.get("time_spent_ms")), _text(record, "batch", 200) or None,
               _confidence(record.get("confidence"), agent),
               _submitted_at(record.get("submitted_at"), now or timezone.now()), excluded, excluded_reason)


def annotator_agent(record: dict[str, Any]) -> str:
    """Who answered: `annotator_agent`, "human" or "llm". The old name of the field, `annotator_kind`, is read
    as well for now (docs/import.md, "Importing annotations made elsewhere"); a line giving both must agree."""
    agent = record.get("annotator_agent", record.get(DEPRECATED_AGENT_FIELD))
    if DEPRECATED_AGENT_FIELD in record and "annotator_agent" in record and record[DEPRECATED_AGENT_FIELD] != agent:
        raise ValidationProblem("annotator_agent", f"says {agent!r} but the old field {DEPRECATED_AGENT_FIELD!r} "
                                                   f"says {record[DEPRECATED_AGENT_FIELD]!r}")
    if agent not in ANNOTATOR_AGENTS:
        raise ValidationProblem("annotator_agent", f"must be \"human\" or \"llm\", got {agent!r}")
    return agent


def _submitted_at(value: Any, now: datetime) -> datetime | None:
    """When the answer was given: an ISO 8601 time with its time zone, not after the import."""
    if value is None:
        return None
    example = "e.g. \"2026-03-01T14:05:00Z\""
    if not isinstance(value, str):
        raise ValidationProblem("submitted_at", f"must be an ISO 8601 time with a time zone ({example}), got {value!r}")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationProblem("submitted_at", f"{value!r} is not an ISO 8601 time ({example})") from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValidationProblem("submitted_at", f"{value!r} has no time zone: add one ({example}), so the time is "
                                                "the same wherever the file is imported")
    if when > now:
        raise ValidationProblem("submitted_at", f"{value!r} is later than the import ({now.isoformat()})")
    return when


def _confidence(value: Any, agent: str) -> float | None:
    """A machine answer's confidence in [0, 1] (docs/escalation.md); people's answers carry none."""
    if value is None:
        return None
    if agent != Annotator.Agent.LLM:
        raise ValidationProblem("confidence", "only a machine answer (\"annotator_agent\": \"llm\") carries one")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ValidationProblem("confidence", f"must be a number from 0 to 1, got {value!r}")
    return float(value)


def _username(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationProblem("annotator", "must be a non-empty name")
    try:
        User.username_validator(value)
    except ValidationError as exc:
        raise ValidationProblem("annotator", f"{value!r}: {exc.messages[0]}") from None
    if len(value) > 150:
        raise ValidationProblem("annotator", "must be at most 150 characters")
    return value


def _text(record: dict[str, Any], name: str, limit: int) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str) or "\x00" in value:
        raise ValidationProblem(name, "must be a string (without NUL characters)")
    if len(value) > limit:
        raise ValidationProblem(name, f"must be at most {limit:,} characters")
    return value


def _time_spent(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TIME_MS:
        raise ValidationProblem("time_spent_ms", f"must be a whole number of milliseconds ≥ 0, got {value!r}")
    return value


class AnnotationWriter:
    """Checks rows against the task, the file so far and the database; writes them in chunks."""

    def __init__(self, task: Task, *, replace: bool, log: ProblemLog) -> None:
        self.task, self.replace, self.log = task, replace, log
        self.pending: list[Row] = []
        self.first_line: dict[tuple[str, str], int] = {}
        self.agent_in_file: dict[str, str] = {}
        self.exclusion_in_file: dict[str, tuple[bool, str, int]] = {}  # name → (excluded, reason, first line)
        self.annotators: dict[str, Annotator | None] = {}  # None: refused (reported once)
        self.batches: dict[str, Batch | None] = {}
        self.created: list[str] = []
        self.added = self.unchanged = self.replaced = 0
        self.stamp = timezone.now()  # when every answer without its own submitted_at was given: one time per file

    @property
    def seen(self) -> int:
        return len(self.first_line)

    def add(self, line: int, record: dict[str, Any]) -> None:
        try:
            row = parse_row(line, record, self.stamp)
        except ValidationProblem as problem:
            self.log.add(line, problem.field, problem.message)
            return
        key = (row.item, row.annotator)
        if key in self.first_line:
            self.log.add(line, "item", f"annotator {row.annotator!r} already answers item {row.item!r} on line "
                                       f"{self.first_line[key]}")
            return
        if self.agent_in_file.setdefault(row.annotator, row.annotator_agent) != row.annotator_agent:
            self.log.add(line, "annotator_agent", f"annotator {row.annotator!r} is "
                                                 f"{self.agent_in_file[row.annotator]!r} on an earlier line")
            return
        excluded, _reason, first = self.exclusion_in_file.setdefault(row.annotator,
                                                                     (row.excluded, row.excluded_reason, line))
        if excluded != row.excluded:
            self.log.add(line, "excluded", f"annotator {row.annotator!r} is {'' if excluded else 'not '}excluded "
                                           f"on line {first}: every line of one annotator says the same")
            return
        self.first_line[key] = line
        self.pending.append(row)
        if len(self.pending) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        rows, self.pending = self.pending, []
        if not rows:
            return
        items = {ext: (pk, payload) for pk, ext, payload in Item.objects.filter(
            task=self.task, external_id__in={r.item for r in rows}).values_list("pk", "external_id", "payload")}
        checked = [(row, items[row.item][0], value) for row in rows
                   if (value := self._checked_value(row, items)) is not _INVALID]
        for row in rows:
            self._annotator(row)
            self._batch(row)
        if self.log:  # the import will roll back: only keep checking
            return
        self._write(checked)

    def exclude_marked(self) -> list[str]:
        """Exclude (with the file's reason) each annotator whose lines are marked excluded and who is not excluded
        here yet; returns their names. Runs inside the import's transaction, after every line was written."""
        done = []
        for name, (excluded, reason, _line) in sorted(self.exclusion_in_file.items()):
            annotator = self.annotators.get(name)
            if excluded and annotator is not None and annotator.excluded_at is None:
                exclude_annotator(annotator, reason or IMPORTED_EXCLUSION)
                done.append(name)
        return done

    def _checked_value(self, row: Row, items: dict[str, tuple[int, dict[str, Any]]]) -> Any:
        if row.item not in items:
            self.log.add(row.line, "item", f"no item with id {row.item!r} in task {self.task.name!r}")
            return _INVALID
        if row.skipped:
            return None
        try:
            return self.task.validate_answer(row.value, items[row.item][1])
        except ValidationProblem as problem:
            self.log.add(row.line, problem.field, problem.message)
            return _INVALID

    def _annotator(self, row: Row) -> Annotator | None:
        """The annotator named on the row, created on first sight (only while the import can still succeed)."""
        if row.annotator in self.annotators:
            return self.annotators[row.annotator]
        user = User.objects.filter(username=row.annotator).select_related("annotator").first()
        if user is not None:
            annotator = getattr(user, "annotator", None)
            if annotator is None:
                self.log.add(row.line, "annotator", f"user {row.annotator!r} exists but is not an annotator")
            elif annotator.agent != row.annotator_agent:
                self.log.add(row.line, "annotator_agent", f"annotator {row.annotator!r} exists as {annotator.agent!r}")
                annotator = None
        elif self.log:
            return None
        else:
            annotator = self._create_annotator(row)
        self.annotators[row.annotator] = annotator
        return annotator

    def _create_annotator(self, row: Row) -> Annotator:
        annotator = create_annotator(row.annotator, agent=row.annotator_agent, languages={self.task.language: None})
        self.created.append(row.annotator)
        return annotator

    def _batch(self, row: Row) -> Batch | None:
        if row.batch is None:
            return None
        if row.batch not in self.batches:
            self.batches[row.batch] = Batch.objects.filter(task=self.task, name=row.batch).first()
        if self.batches[row.batch] is None:
            self.log.add(row.line, "batch", f"no batch named {row.batch!r} in task {self.task.name!r}")
        return self.batches[row.batch]

    def _write(self, checked: list[tuple[Row, int, Any]]) -> None:
        annotator_ids = {self.annotators[r.annotator].pk for r, _, _ in checked}  # all resolved: no problems
        existing = {(a.item_id, a.annotator_id): a for a in Annotation.objects.filter(
            item_id__in={item_id for _, item_id, _ in checked}, annotator_id__in=annotator_ids)}
        new, times = [], []
        for row, item_id, value in checked:
            fields = self._fields(row, value)
            old = existing.get((item_id, fields["annotator"].pk))
            if old is None:
                new.append(Annotation(item_id=item_id, source="import", **fields))
                times.append(row.submitted_at or self.stamp)
            elif canonical_json([old.value, old.skipped]) == canonical_json([value, row.skipped]):
                self.unchanged += 1
            elif self.replace:
                self._replace(old, {**fields, "submitted_at": row.submitted_at or self.stamp})
            else:
                self.log.add(row.line, "value", f"annotator {row.annotator!r} already answered item {row.item!r} "
                                                f"with {canonical_json(old.value)}; pass --replace (replace) to "
                                                "replace it (the old answer is kept as a revision)")
        if not self.log:
            Annotation.objects.bulk_create(new)
            # the model stamps submitted_at with the clock at each insert (a different microsecond per row, in the
            # file's order): set the answer's own time, or the file's one time, instead
            for annotation, when in zip(new, times, strict=True):
                annotation.submitted_at = when
            Annotation.objects.bulk_update(new, ["submitted_at"])
            self.added += len(new)

    def _fields(self, row: Row, value: Any) -> dict[str, Any]:
        return {"annotator": self.annotators[row.annotator], "batch": self.batches.get(row.batch or ""),
                "value": value, "skipped": row.skipped, "skip_reason": row.skip_reason,
                "flagged": bool(row.flag_comment), "flag_comment": row.flag_comment,
                "time_spent_ms": row.time_spent_ms, "confidence": row.confidence}

    def _replace(self, old: Annotation, fields: dict[str, Any]) -> None:
        AnnotationRevision.objects.create(annotation=old, value=old.value, skipped=old.skipped,
                                          previous_submitted_at=old.submitted_at)
        for name, value in fields.items():
            if name != "batch" or value is not None:
                setattr(old, name, value)
        old.source = "import"
        old.save()
        self.replaced += 1


_INVALID = object()
