"""The report document's shape, typed: what `build_report` stores in `Report.result`, `report --format json`
prints and the pages, exports and charts read (every key is documented in docs/reports.md, "The report JSON").

TypedDicts, not classes: a document is stored as JSON and read back as a plain dict, so the types describe the
dict exactly as it is, add nothing at run time and leave the JSON byte for byte as it was. A reader annotates
what it takes (`doc: ReportDocument`) and reads the keys named here; a key a document may lack (older format
versions, the parts, the optional blocks) is `NotRequired` and read with `.get`.
"""
from __future__ import annotations

from typing import Any, NotRequired, TypedDict

# The values of a metric that may be undefined: None, with the reason beside it.
Value = float | None


class HumanScore(TypedDict):
    """`human`: the humans' score the HUME way, with its interval; per kind it carries more (`**human.extra`)."""

    main_metric: str
    main_score: Value
    ci_low: Value
    ci_high: Value
    ci_method: str
    ci_note: str | None
    reason: str | None
    n_items_scored: int
    scores: dict[str, Value]
    n_annotators_scored: NotRequired[int]
    n: NotRequired[int]
    aggregation: NotRequired[str]
    combination: NotRequired[str]


class AnnotatorRow(TypedDict):
    """One of `annotators`: a person or an LLM with its own scores against gold."""

    name: str
    agent: str  # "human" or "llm"
    n_answers: int
    n_skipped: int
    scores: dict[str, Value]
    n_flagged: int


class LLMBlock(TypedDict):
    """`llm`: the LLM annotators apart from the humans (HUME §3.6)."""

    annotators: list[str]
    included_in_human: bool
    main_score_mean: Value


class ScoredPart(TypedDict):
    """What `score_task` returns for a set of answers (the whole task, one batch, one language), with the
    counts the report adds; the parts (`by_batch`, `by_language`) are this without the item-level lists."""

    kind: str
    score_scale: Any
    n_items: int
    n_annotators: int
    n_answers: int
    n_skipped: int
    n_excluded: int
    agreement: dict[str, Value]
    agreement_notes: dict[str, str]
    agreement_bands: dict[str, str]
    agreement_counts: dict[str, Any]
    agreement_pairs: dict[str, Any]
    agreement_intervals: dict[str, Any]
    aggregation: str
    human: HumanScore
    annotators: list[AnnotatorRow]
    llm: LLMBlock
    flags: dict[str, Any]
    n_flagged: int
    n_flagged_items: int
    agreement_main: str | None
    annotator_models: NotRequired[dict[str, Any]]
    # Item-level lists and chart data: the whole task's only (a part is scored without them).
    disagreement: NotRequired[list[dict[str, Any]]]
    excluded: NotRequired[list[dict[str, Any]]]
    charts: NotRequired[dict[str, Any]]


class BatchPart(ScoredPart):
    batch_id: int
    batch: str
    language: str


class LanguagePart(ScoredPart):
    language: str


class ReportDocument(ScoredPart):
    """The whole report of a task: the task's identity, its scored whole, the item-level lists, the parts by
    batch and by language, and the digests it was computed from."""

    format_version: int
    task: str
    task_id: int
    language: str
    mteb_task_name: str
    mteb_subset: str
    excluded_reasons: dict[str, int]
    n_rows_read: int
    excluded_annotators: list[dict[str, Any]]
    reincluded_annotators: list[dict[str, Any]]
    answers_digest: str
    inputs_digest: str
    by_batch: NotRequired[list[BatchPart]]
    by_language: NotRequired[list[LanguagePart]]
    computed_at: NotRequired[str]  # stored with the document when a run stores it
    computed_in: NotRequired[str]


def as_document(stored: dict[str, Any]) -> ReportDocument:
    """A stored `Report.result` read as the typed document (a cast: no copy, no check at run time)."""
    return stored  # type: ignore[return-value]
