"""The task kinds (docs/architecture.md, "The task kinds"): the one place that says what an item, its gold
and an answer look like.

Each kind validates an imported record (returning the payload annotators see and the gold kept apart) and
an annotator's answer. Import, the browser loop, the API, the LLM runner and the annotation import all call
these, so an answer accepted in one place is accepted everywhere.

A kind's class is its registry entry in tasks_app: besides parsing and validation it declares the file
format (record fields, gold field, CSV columns), whether sampling stratifies by its gold, whether several
judges' answers can be averaged, its MTEB task type and the template that shows its payload. The later
apps register their own per-kind parts keyed by the kind's name (annotation: answer form, answer template,
LLM prompt; agreement: scorer, main agreement metric, MTEB score keys, judge agreement) and
`tasks_app/kind_parts.py` checks that no kind lacks any part in any app (a Django system check, so
runserver, migrate and `manage.py check` refuse an incomplete kind, and tests/test_kind_registry.py).
Adding a kind: docs/architecture.md ("Adding a task kind").

Value formats (answers; gold uses the same format):
- classification: a label string from the task's label set
- clustering: a list with one cluster id (str) per sentence; only the partition counts
- reranking: {candidate_id: 0 | 1} for every candidate
- graded_relevance: {doc_id: number on the task's scale} for every document
- sts: a number on the task's scale (default 0–5)
- pairwise: "a" | "b" | "tie"
- likert: {axis: integer on the task's scale (default 1–7)} for every axis
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol


class ValidationProblem(ValueError):
    """A record or answer is wrong; `field` names the offending field so errors can say where."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


class TaskConfig(Protocol):
    """What a kind needs to know about its task (the Task model satisfies it)."""

    kind: str
    labels: list[str]
    scale_min: float | None
    scale_max: float | None
    scale_step: float | None
    axes: list[str]


@dataclass(frozen=True)
class Config:
    """A plain TaskConfig, for validating files before any Task row exists."""

    kind: str
    labels: list[str] = field(default_factory=list)
    scale_min: float | None = None
    scale_max: float | None = None
    scale_step: float | None = None
    axes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ParsedRecord:
    external_id: str | None
    payload: dict[str, Any]
    gold: Any  # None when the record carries no gold


STRATA_FIELDS = ("system", "group")  # optional record fields: the item's system and group, never shown


def read_strata(record: dict[str, Any]) -> dict[str, str]:
    """The record's `system` / `group` (strings of at most 200 characters), those it gives."""
    strata = {}
    for name in STRATA_FIELDS:
        value = text_field(record, name, required=False)
        if value is not None:
            if len(value) > 200:
                raise ValidationProblem(name, "must be at most 200 characters")
            strata[name] = value
    return strata


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_digest(*parts: Any) -> str:
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()


# --- small field readers shared by the kinds -------------------------------------------------------------

def text_field(record: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = record.get(name)
    if value is None or value == "":
        if required:
            raise ValidationProblem(name, "is required")
        return None
    if not isinstance(value, str):
        raise ValidationProblem(name, f"must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise ValidationProblem(name, "contains a NUL character")
    return value


def number_field(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise ValidationProblem(name, "must be a number, got a boolean")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValidationProblem(name, f"must be a number, got {value!r}") from None
    if isinstance(value, int) and abs(value) > 1e300:  # math.isfinite(10**400) raises OverflowError
        raise ValidationProblem(name, "must be a finite number, got an integer too large to use (over 10^300)")
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValidationProblem(name, f"must be a finite number, got {value!r}")
    return float(value)


def on_scale(value: float, name: str, lo: float, hi: float, step: float | None) -> float:
    if value < lo - 1e-9 or value > hi + 1e-9:
        raise ValidationProblem(name, f"{value:g} is outside the scale {lo:g}–{hi:g}")
    if step:
        steps = (value - lo) / step
        if abs(steps - round(steps)) > 1e-6:
            raise ValidationProblem(name, f"{value:g} is not on the scale's step of {step:g}")
    return int(value) if float(value).is_integer() else value


def string_list(record: dict[str, Any], name: str, *, min_len: int = 1) -> list[str]:
    value = record.get(name)
    if not isinstance(value, list):
        raise ValidationProblem(name, "must be a list")
    if len(value) < min_len:
        raise ValidationProblem(name, f"must have at least {min_len} entries")
    for i, entry in enumerate(value):
        if not isinstance(entry, str) or not entry:
            raise ValidationProblem(f"{name}[{i}]", "must be a non-empty string")
    return value


def id_string(value: Any, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise ValidationProblem(name, "must be a non-empty string or integer id")
    return str(value)


def optional_external_id(record: dict[str, Any]) -> str | None:
    for key in ("id", "_id"):
        if record.get(key) not in (None, ""):
            return id_string(record[key], key)
    return None


def id_text_list(record: dict[str, Any], name: str, noun: str) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """The `name` list of {id, text, ...} objects (reranking candidates, graded documents): non-empty, ids unique.

    Returns (what annotators see: {id, text}; the raw entry, for its gold field) pairs in file order."""
    raw = record.get(name)
    if not isinstance(raw, list) or not raw:
        raise ValidationProblem(name, "must be a non-empty list")
    entries, seen = [], set()
    for i, entry in enumerate(raw):
        where = f"{name}[{i}]"
        if not isinstance(entry, dict):
            raise ValidationProblem(where, "must be an object with id and text")
        eid = id_string(entry.get("id"), f"{where}.id")
        if eid in seen:
            raise ValidationProblem(f"{where}.id", f"duplicate {noun} id {eid!r}")
        seen.add(eid)
        entries.append(({"id": eid, "text": text_field(entry, "text") or ""}, entry))
    return entries


def deterministic_shuffle(entries: list[Any], seed_text: str) -> list[Any]:
    """Order candidates by a hash, so positives listed first in a file never show first on screen."""
    return sorted(entries, key=lambda e: content_digest(seed_text, e))


# --- the kinds ---------------------------------------------------------------------------------------------

class TaskKind:
    """One task kind. Subclasses define parsing and answer validation and declare every attribute below that
    has no default (`kind_parts.py` reports a kind that leaves one out)."""

    name: ClassVar[str]
    record_fields: ClassVar[tuple[str, ...]]  # a JSONL record's fields, as the formats table shows them
    format_note: ClassVar[str] = ""  # what the formats table adds after the fields
    gold_field: ClassVar[str]  # the record field holding gold: import problems about gold name it
    csv_fields: ClassVar[tuple[str, ...]]  # empty: CSV is not supported for this kind
    stratified: ClassVar[bool]  # sampling keeps the proportions of the gold value (a label)
    averageable: ClassVar[bool]  # answers are numbers on the scale, so several judges' answers average
    mteb_type: ClassVar[str]  # MTEB's task type, the column of HUME's Table 1
    payload_template: ClassVar[str]  # shows an item's payload on the admin pages
    default_scale: ClassVar[tuple[float, float, float] | None] = None
    needs_labels: ClassVar[bool] = False
    needs_axes: ClassVar[bool] = False

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")

    @property
    def csv_gold_columns(self) -> tuple[str, ...]:
        """CSV columns that carry gold, so a file without gold may leave them out."""
        return tuple(c for c in self.csv_fields if c == self.gold_field)

    def scale(self, task: TaskConfig) -> tuple[float, float, float | None]:
        lo, hi, step = self.default_scale or (0.0, 0.0, None)
        return (
            task.scale_min if task.scale_min is not None else lo,
            task.scale_max if task.scale_max is not None else hi,
            task.scale_step if task.scale_step is not None else step,
        )

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        raise NotImplementedError

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> Any:
        """Return the normalised answer or raise ValidationProblem naming the field."""
        raise NotImplementedError

    def gold_labels(self, gold: Any) -> list[str]:
        """Labels a gold value introduces (used to infer a label set when none is given)."""
        return []


class Classification(TaskKind):
    name = "classification"
    record_fields = ("text", "label")
    gold_field = "label"
    csv_fields = ("text", "label")
    stratified = True
    averageable = False
    mteb_type = "Classification"
    payload_template = "tasks_app/payloads/_classification.html"
    needs_labels = True

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        text = text_field(record, "text")
        gold = None
        if record.get("label") not in (None, ""):
            gold = self._label(record["label"], task, "label")
        return ParsedRecord(optional_external_id(record), {"text": text}, gold)

    def _label(self, value: Any, task: TaskConfig, name: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValidationProblem(name, f"must be a label string, got {type(value).__name__}")
        label = str(value)
        if task.labels and label not in task.labels:
            raise ValidationProblem(name, f"unknown label {label!r}; the task's labels are {task.labels}")
        return label

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> str:
        return self._label(value, task, "value")

    def gold_labels(self, gold: Any) -> list[str]:
        return [gold] if gold is not None else []


class Clustering(TaskKind):
    name = "clustering"
    record_fields = ("sentences[]", "labels[]")
    format_note = "one set per line"
    gold_field = "labels"
    csv_fields = ()
    stratified = False
    averageable = False
    mteb_type = "Clustering"
    payload_template = "tasks_app/payloads/_clustering.html"

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        sentences = string_list(record, "sentences", min_len=2)
        gold = None
        if record.get("labels") is not None:
            labels = record["labels"]
            if not isinstance(labels, list) or len(labels) != len(sentences):
                raise ValidationProblem("labels", f"must be a list of {len(sentences)} labels, one per sentence")
            gold = [id_string(v, f"labels[{i}]") for i, v in enumerate(labels)]
        return ParsedRecord(optional_external_id(record), {"sentences": sentences}, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> list[str]:
        n = len(payload["sentences"])
        if not isinstance(value, list) or len(value) != n:
            raise ValidationProblem("value", f"must be a list of {n} cluster ids, one per text")
        return [id_string(v, f"value[{i}]") for i, v in enumerate(value)]


class Reranking(TaskKind):
    name = "reranking"
    record_fields = ("query", "instruction?", "candidates[{id,text,relevant}]")
    format_note = "or MTEB's positive[] / negative[] lists instead of candidates"
    gold_field = "candidates"
    csv_fields = ()
    stratified = False
    averageable = False  # a mean of 0/1 judgments is not a judgment
    mteb_type = "Reranking"
    payload_template = "tasks_app/payloads/_reranking.html"

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        query = text_field(record, "query")
        instruction = text_field(record, "instruction", required=False)
        if "candidates" in record:
            candidates, gold = self._candidates(record)
        elif "positive" in record or "negative" in record:
            candidates, gold = self._positive_negative(record, query or "")
        else:
            raise ValidationProblem("candidates", "is required (or MTEB's positive/negative lists)")
        payload = {"query": query, "instruction": instruction, "candidates": candidates}
        return ParsedRecord(optional_external_id(record), payload, gold)

    def _candidates(self, record: dict[str, Any]) -> tuple[list[dict[str, str]], dict[str, int] | None]:
        candidates, gold = [], {}
        for i, (shown, entry) in enumerate(id_text_list(record, "candidates", "candidate")):
            candidates.append(shown)
            if entry.get("relevant") is not None:
                gold[shown["id"]] = self._binary(entry["relevant"], f"candidates[{i}].relevant")
        if gold and len(gold) != len(candidates):
            raise ValidationProblem("candidates", "relevant must be given for every candidate or none")
        return candidates, (gold or None)

    def _positive_negative(self, record: dict[str, Any], query: str) -> tuple[list[dict[str, str]], dict[str, int]]:
        positives = string_list(record, "positive", min_len=0) if "positive" in record else []
        negatives = string_list(record, "negative", min_len=0) if "negative" in record else []
        if not positives and not negatives:
            raise ValidationProblem("positive", "positive and negative are both empty")
        tagged = [(t, 1) for t in positives] + [(t, 0) for t in negatives]
        ordered = deterministic_shuffle(tagged, query)
        candidates = [{"id": f"c{i + 1}", "text": t} for i, (t, _) in enumerate(ordered)]
        gold = {f"c{i + 1}": rel for i, (_, rel) in enumerate(ordered)}
        return candidates, gold

    @staticmethod
    def _binary(value: Any, name: str) -> int:
        if value in (0, 1, True, False) and not isinstance(value, float):
            return int(value)
        if isinstance(value, str) and value.strip().lower() in {"0", "1", "true", "false"}:
            return int(value.strip().lower() in {"1", "true"})
        raise ValidationProblem(name, f"must be 0 or 1, got {value!r}")

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, int]:
        ids = [c["id"] for c in payload["candidates"]]
        if not isinstance(value, dict):
            raise ValidationProblem("value", "must be an object {candidate_id: 0 or 1}")
        missing = [cid for cid in ids if cid not in value]
        unknown = [k for k in value if k not in ids]
        if missing:
            raise ValidationProblem("value", f"candidates not judged: {missing}")
        if unknown:
            raise ValidationProblem("value", f"unknown candidate ids: {unknown}")
        return {cid: self._binary(value[cid], f"value.{cid}") for cid in ids}


class GradedRelevance(TaskKind):
    name = "graded_relevance"
    record_fields = ("query", "documents[{id,text,score}]")
    gold_field = "documents"
    csv_fields = ()
    stratified = False
    averageable = True
    mteb_type = "Retrieval"
    payload_template = "tasks_app/payloads/_graded_relevance.html"
    default_scale = (0.0, 10.0, 1.0)

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        query = text_field(record, "query")
        documents, gold = [], {}
        for i, (shown, entry) in enumerate(id_text_list(record, "documents", "document")):
            documents.append(shown)
            if entry.get("score") is not None:
                gold[shown["id"]] = number_field(entry["score"], f"documents[{i}].score")
        payload = {"query": query, "documents": documents}
        return ParsedRecord(optional_external_id(record), payload, gold or None)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, float]:
        ids = [d["id"] for d in payload["documents"]]
        if not isinstance(value, dict) or sorted(value) != sorted(ids):
            raise ValidationProblem("value", f"must score every document exactly once: {ids}")
        lo, hi, step = self.scale(task)
        return {d: on_scale(number_field(value[d], f"value.{d}"), f"value.{d}", lo, hi, step) for d in ids}


class STS(TaskKind):
    name = "sts"
    record_fields = ("sentence1", "sentence2", "score")
    gold_field = "score"
    csv_fields = ("sentence1", "sentence2", "score")
    stratified = False
    averageable = True
    mteb_type = "STS"
    payload_template = "tasks_app/payloads/_sts.html"
    default_scale = (0.0, 5.0, 0.5)

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"sentence1": text_field(record, "sentence1"), "sentence2": text_field(record, "sentence2")}
        gold = None
        if record.get("score") not in (None, ""):
            lo, hi, _ = self.scale(task)
            gold = on_scale(number_field(record["score"], "score"), "score", lo, hi, None)
        return ParsedRecord(optional_external_id(record), payload, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> float:
        lo, hi, step = self.scale(task)
        return on_scale(number_field(value, "value"), "value", lo, hi, step)


class Pairwise(TaskKind):
    name = "pairwise"
    record_fields = ("context", "a", "b", "preferred")
    format_note = "preferred: a, b or tie"
    gold_field = "preferred"
    csv_fields = ("context", "a", "b", "preferred")
    stratified = True
    averageable = False
    mteb_type = "PairClassification"
    payload_template = "tasks_app/payloads/_pairwise.html"
    choices: ClassVar[tuple[str, ...]] = ("a", "b", "tie")

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"context": text_field(record, "context"), "a": text_field(record, "a"), "b": text_field(record, "b")}
        gold = None
        if record.get("preferred") not in (None, ""):
            gold = self._choice(record["preferred"], "preferred")
        return ParsedRecord(optional_external_id(record), payload, gold)

    def _choice(self, value: Any, name: str) -> str:
        choice = value.strip().lower() if isinstance(value, str) else value
        if choice not in self.choices:
            raise ValidationProblem(name, f"must be one of a, b, tie; got {value!r}")
        return choice

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> str:
        return self._choice(value, "value")


class Likert(TaskKind):
    name = "likert"
    record_fields = ("context", "text", "scores{axis: value}")
    gold_field = "scores"
    csv_fields = ("context", "text")
    stratified = False
    averageable = True
    mteb_type = "Summarization"
    payload_template = "tasks_app/payloads/_likert.html"
    default_scale = (1.0, 7.0, 1.0)
    needs_axes = True

    def parse_record(self, record: dict[str, Any], task: TaskConfig) -> ParsedRecord:
        payload = {"context": text_field(record, "context"), "text": text_field(record, "text")}
        gold = None
        scores = record.get("scores")
        if scores is None and any(axis in record for axis in task.axes):  # CSV: one column per axis
            scores = {axis: record[axis] for axis in task.axes if record.get(axis) not in (None, "")}
        if scores:
            if not isinstance(scores, dict):
                raise ValidationProblem("scores", "must be an object {axis: score}")
            unknown = [a for a in scores if a not in task.axes]
            if unknown:
                raise ValidationProblem("scores", f"unknown axes {unknown}; the task's axes are {task.axes}")
            lo, hi, _ = self.scale(task)
            gold = {a: on_scale(number_field(v, f"scores.{a}"), f"scores.{a}", lo, hi, None) for a, v in scores.items()}
        return ParsedRecord(optional_external_id(record), payload, gold)

    def validate_answer(self, value: Any, task: TaskConfig, payload: dict[str, Any]) -> dict[str, float]:
        if not isinstance(value, dict) or sorted(value) != sorted(task.axes):
            raise ValidationProblem("value", f"must rate every axis exactly once: {task.axes}")
        lo, hi, step = self.scale(task)
        return {a: on_scale(number_field(value[a], f"value.{a}"), f"value.{a}", lo, hi, step) for a in task.axes}


KINDS: dict[str, TaskKind] = {k.name: k for k in (
    Classification(), Clustering(), Reranking(), GradedRelevance(), STS(), Pairwise(), Likert()
)}
KIND_CHOICES = [(name, kind.label) for name, kind in KINDS.items()]


def get_kind(name: str) -> TaskKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValidationProblem("kind", f"unknown task kind {name!r}; choose one of {sorted(KINDS)}") from None
