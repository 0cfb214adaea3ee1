"""Build a task with gold and annotations from Python data, the way the importers do, for report tests.

`build_task` parses records with the task kind's own `parse_record` (tasks_app.core.kinds), so items and gold
look exactly like imported ones; `import_answers` takes rows in the annotation-import format
(`{"item", "annotator", "annotator_agent", "value", "skipped", "skip_reason", "flag_comment",
"time_spent_ms"}`), validates each value with the task, and bulk-creates the annotations.
`import_study` does the same through the real `import_task` and `import_annotations` commands.
`report_via_worker` then runs the whole path: queue → real worker → stored report → `report` CLI JSON.
"""
from __future__ import annotations

import io
import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from django.core.management import call_command

from agreement.core.reports import request_report
from agreement.models import Report
from annotation.core.annotators import create_annotator
from annotation.models import Annotation, Annotator, Batch
from tasks_app.core.kinds import content_digest, get_kind
from tasks_app.models import Item, ItemGold, Task


def build_task(kind: str, name: str, records: Sequence[dict[str, Any]], **fields: Any) -> Task:
    """A task of `kind` whose items (and gold) are `records` parsed by the kind; ids default to 1, 2, …"""
    fields.setdefault("language", "eng-Latn")
    task = Task.objects.create(name=name, kind=kind, **fields)
    definition = get_kind(kind)
    items, golds = [], []
    for position, record in enumerate(records, start=1):
        parsed = definition.parse_record(record, task)
        external_id = parsed.external_id or str(position)
        items.append(Item(task=task, uid=content_digest(task.name, external_id), external_id=external_id,
                          position=position, payload=parsed.payload, in_sample=True))
        golds.append(parsed.gold)
    Item.objects.bulk_create(items)
    ItemGold.objects.bulk_create([ItemGold(item=item, value=gold)
                                  for item, gold in zip(items, golds, strict=True) if gold is not None])
    return task


def import_study(folder: Path, kind: str, name: str, records: Sequence[dict[str, Any]],
                 answers: Sequence[dict[str, Any]], **options: str) -> Task:
    """The real importers, as an admin runs them: `import_task` on the records (ids 1, 2, … unless given),
    then `import_annotations` on the answers; options are import_task's (labels="a,b", scale="1,5", …)."""
    data, answer_file = folder / f"{name}.jsonl", folder / f"{name}-answers.jsonl"
    data.write_text("".join(json.dumps({"id": str(n), **r}) + "\n" for n, r in enumerate(records, start=1)))
    answer_file.write_text("".join(json.dumps({"annotator_agent": "human", **a}) + "\n" for a in answers))
    args = [f"--{key.replace('_', '-')}={value}" for key, value in {"language": "eng-Latn", **options}.items()]
    call_command("import_task", str(data), f"--name={name}", f"--kind={kind}", *args, stdout=io.StringIO())
    call_command("import_annotations", str(answer_file), f"--task={name}", stdout=io.StringIO())
    return Task.objects.get(name=name)


def annotator_named(name: str, agent: str = "human") -> Annotator:
    annotator = Annotator.objects.filter(user__username=name).first()
    if annotator is None:
        annotator = create_annotator(name, agent=agent)  # no password: hashing one costs ~0.5 s
    return annotator


def import_answers(task: Task, rows: Iterable[dict[str, Any]], batch: Batch | None = None) -> int:
    """Store rows in the annotation-import format (values validated by the task), like import_annotations."""
    items = {item.external_id: item for item in task.items.all()}
    annotators: dict[str, Annotator] = {}
    created = []
    for row in rows:
        name = row["annotator"]
        if name not in annotators:
            annotators[name] = annotator_named(name, row.get("annotator_agent", "human"))
        item = items[str(row["item"])]
        skipped = bool(row.get("skipped", False))
        value = None if skipped else task.validate_answer(row["value"], item.payload)
        created.append(Annotation(
            item=item, annotator=annotators[name], batch=batch, value=value, skipped=skipped,
            skip_reason=row.get("skip_reason", ""), flagged=bool(row.get("flag_comment")),
            flag_comment=row.get("flag_comment", ""), time_spent_ms=row.get("time_spent_ms"), source="import"))
    Annotation.objects.bulk_create(created)
    return len(created)


def answers_from_columns(columns: dict[str, Sequence[Any]], item_ids: Sequence[str] | None = None,
                         agent: str = "human") -> list[dict[str, Any]]:
    """Import rows from a rater → ratings table (None = that rater did not rate the item)."""
    rows = []
    for annotator, values in columns.items():
        for index, value in enumerate(values):
            if value is not None:
                item = item_ids[index] if item_ids else str(index + 1)
                rows.append({"item": item, "annotator": annotator, "annotator_agent": agent, "value": value})
    return rows


def wait_for_report(task: Task, timeout: float = 60) -> Report:
    """Poll the database until the task's report is done or failed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = Report.objects.filter(task=task).first()
        if report and report.status in (Report.Status.DONE, Report.Status.FAILED):
            return report
        time.sleep(0.2)
    raise AssertionError(f"the report of {task.name} did not finish within {timeout} s")


def cli_report(task: Task, *args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    call_command("report", task.name, *args, stdout=out, stderr=err)
    doc = json.loads(out.getvalue())
    doc["_cli_said"] = err.getvalue()
    return doc


def report_via_worker(task: Task) -> dict[str, Any]:
    """The whole path: queue the report, let the real worker compute and store it, read it with the CLI."""
    request_report(task.pk)
    report = wait_for_report(task)
    assert report.status == Report.Status.DONE, report.error
    assert report.computed_in.startswith("worker"), report.computed_in
    doc = cli_report(task)
    assert "stored" in doc["_cli_said"], doc["_cli_said"]  # the CLI printed the worker's report
    return doc
