"""What a kind's folder carries for trying it out: small records with gold, the settings of a task they fit,
a valid answer with the form data that gives it, and the demo's tasks of the kind (each kind's `samples.py`, its
definition's `samples`).

The tests and anyone trying a new kind read them through the registry (`KINDS[name].samples`), so a copied
folder brings its own samples and no file outside the folder lists the kinds (docs/architecture.md, "Adding a
task kind"). Records are in the kind's import format (docs/import.md); gold is as `parse_record` stores it.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DemoTask:
    """A task the demo (`manage.py load_demo`) loads for the kind: its files are in the kind's folder, under
    demo/ (the records in the kind's import format, the instructions, optionally earlier annotators' answers),
    and the rest are `import_task`'s options and the batch's overlap. `batch` False: no batch of its own (the demo
    campaign's task, whose campaign hands its items out: agreement/campaigns/campaign_demo.py)."""
    name: str
    language: str
    file: str
    instructions: str = "instructions.md"
    overlap: int | None = None
    answers: str | None = None  # answers of earlier annotators (`import_annotations`), so reports show at once
    labels: list[str] | None = None
    scale: tuple[float, float] | None = None
    step: float | None = None
    axes: list[str] | None = None
    mteb_task_name: str | None = None
    mteb_subset: str | None = None
    batch: bool = True


@dataclass(frozen=True)
class KindSamples:
    # the annotator's loop: a task's settings (Task fields) and a few records with gold
    task_fields: dict[str, Any]
    records: list[dict[str, Any]]
    # an answer valid for an item of `records` under `task_fields` (from its payload), and the answer form's
    # POST data that gives it
    valid_answer: Callable[[dict[str, Any]], Any]
    form_data: Callable[[dict[str, Any]], dict[str, str]]
    # a gold value that fits every item of `records` and the strings that would betray it on a page
    telltale_gold: tuple[Any, list[str]]
    # import: `import_task` options, JSONL records (ids given) and the gold each id gets
    import_options: dict[str, str]
    import_records: list[dict[str, Any]]
    import_gold: dict[str, Any]
    # the same content as CSV (header, rows) where the kind reads CSV (`csv_fields`), else None
    import_csv: tuple[list[str], list[list[str]]] | None
    # model runs: records with gold, two humans' answers in record order, and the task's settings
    model_records: list[dict[str, Any]]
    model_humans: dict[str, list[Any]]
    # the report's charts: twelve items with gold (`report_records()`), the gold of a record, an answer near
    # a gold value (changed now and then, by the seeded `rng`), and the task's settings
    report_records: Callable[[], list[dict[str, Any]]]
    report_gold: Callable[[dict[str, Any]], Any]
    report_answer: Callable[[Any, random.Random], Any]
    report_charts: tuple[str, ...]  # the charts the report page shows for that task (their URL names)
    # the scorer: a small valid task as (answers {item: {annotator: value}} of alice and bob, gold {item: value})
    scorer_sample: tuple[dict[Any, dict[str, Any]], dict[Any, Any]]
    model_task_fields: dict[str, Any] = field(default_factory=dict)
    report_task_fields: dict[str, Any] = field(default_factory=dict)
    # LLM judges (optional): a record with gold for the item marked `marker` (its i-th) and the answer a judge
    # gives for it, the task's settings, and strings its prompt for the first item must show
    llm_record: Callable[[str, int], tuple[dict[str, Any], Any]] | None = None
    llm_task_fields: dict[str, Any] = field(default_factory=dict)
    prompt_needles: list[str] | None = None
    # PPI (kinds with `ppi_estimands`): the i-th of any number of distinct records (no gold), a random answer
    # drawn from a numpy Generator, and the task's settings
    ppi_record: Callable[[int], dict[str, Any]] | None = None
    ppi_answer: Callable[[Any], Any] | None = None
    ppi_task_fields: dict[str, Any] = field(default_factory=dict)
    # the demo: the tasks `manage.py load_demo` loads for the kind, files in its folder's demo/
    demo: tuple[DemoTask, ...] = ()
