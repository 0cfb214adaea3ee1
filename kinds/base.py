"""What every task kind shares (docs/architecture.md, "The task kinds"): the base class `TaskKind`, the
problem a bad record or answer raises, and the field readers the kinds' parsers are made of.

A kind is one folder under kinds/ (`kinds/sts/`, ...) holding everything about it, registered by one line in
kinds/kind_registry.py; its name is its folder's name. Import, the browser loop, the API, the LLM runner and the
annotation import all call the kind's `parse_record` / `validate_answer`, so an answer accepted in one place is
accepted everywhere. The apps ask the registry for a kind's parts and declare which parts they need
(`<app>/kind_parts.py`); `tasks_app/kind_parts.py` checks that no kind lacks one (a Django system check, so
runserver, migrate and `manage.py check` refuse an incomplete kind, and tests/test_kind_registry.py).
This package imports only the maths package, Django and libraries, never an app (tests/test_import_direction.py).
Adding a kind: docs/architecture.md ("Adding a task kind").
Each kind's value format (its answers; gold uses the same format) is in its definition.py.
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


# --- the kind base class -----------------------------------------------------------------------------------

class TaskKind:
    """One task kind. Subclasses define parsing and answer validation and declare every attribute below that
    has no default (`tasks_app/kind_parts.py` reports a kind that leaves one out)."""

    name: ClassVar[str]
    record_fields: ClassVar[tuple[str, ...]]  # a JSONL record's fields, as the formats table shows them
    format_note: ClassVar[str] = ""  # what the formats table adds after the fields
    gold_field: ClassVar[str]  # the record field holding gold: import problems about gold name it
    csv_fields: ClassVar[tuple[str, ...]]  # empty: CSV is not supported for this kind
    stratified: ClassVar[bool]  # sampling keeps the proportions of the gold value (a label)
    averageable: ClassVar[bool]  # answers are numbers on the scale, so several judges' answers average
    mteb_type: ClassVar[str]  # MTEB's task type, the column of HUME's Table 1
    payload_template: ClassVar[str]  # shows an item's payload on the admin pages: "kinds/<name>/payload.html"
    # the parts the apps use (each app's kind_parts.py lists what it needs; a part the kind lacks is an error)
    answer_form: ClassVar[type]  # its form.py: the annotator's answer form (annotation)
    prompt: ClassVar[Any]  # its prompt.py: what an LLM annotator is asked (annotation/llm)
    scorer: ClassVar[type]  # its scorer.py: the human score and agreement, HUME's protocol (agreement's reports)
    model_evaluation: ClassVar[Any]  # its evaluation.py: how models run here are scored on it (model runs)
    keys_help_template: ClassVar[str]  # its keys in the loop's keyboard help: "kinds/<name>/keys_help.html"
    scripts: ClassVar[tuple[str, ...]] = ()  # the item pages' scripts its answer partial needs: files in its
    # folder's static/, named "kinds/<name>/<file>" (kinds/static_finder.py serves them)
    styles: ClassVar[tuple[str, ...]] = ()  # the item pages' style sheets its answer partial needs, likewise
    samples: ClassVar[Any]  # its samples.py: a KindSamples (kinds/samples.py) of records, answers, import files
    default_scale: ClassVar[tuple[float, float, float] | None] = None
    needs_labels: ClassVar[bool] = False
    needs_axes: ClassVar[bool] = False
    # what the apps ask of a kind instead of listing kinds by name (each read through the registry)
    aggregates_labels: ClassVar[bool] = False  # its human is built from labels, one per item or per (query,
    # candidate), so an annotator model (Dawid-Skene, MACE, ...) may replace the majority (docs/reports.md)
    label_unit: ClassVar[str] = "items"  # what one such label is about, as the annotator-models block says
    sentence_pairs: ClassVar[bool] = False  # an item is two sentences rated on the scale: SAGE's human row
    answers_are_partitions: ClassVar[bool] = False  # an answer is a partition, equal up to renaming its parts
    ppi_estimands: ClassVar[Any] = None  # its kinds.ppi_estimands.KindEstimands; None: no PPI estimate

    def __init__(self, name: str | None = None) -> None:
        if name is not None:  # the registry names a kind after its folder
            self.name = name

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
