"""Small datasets of every task kind (each kind's samples.py), and helpers the import, sampling and
annotation-import tests share."""
from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from tasks_app.models import Item, ItemGold, Task
from tests.kind_samples import SAMPLES as KIND_SAMPLES
from tests.kind_samples import SampleTable


class ImportSamples(SampleTable):
    """{kind: (import options, JSONL records, expected gold by external id)}, each kind's own (its samples.py).
    Reranking's records include one with `positive`/`negative` lists: its candidate ids come from a
    deterministic shuffle, so its gold is checked apart."""

    def __init__(self) -> None:
        super().__init__("import_records")

    def __getitem__(self, name: str) -> tuple[dict[str, str], list[dict[str, Any]], dict[str, Any]]:
        samples = KIND_SAMPLES[name]
        return samples.import_options, samples.import_records, samples.import_gold


SAMPLES = ImportSamples()
# The kinds that read CSV again, as CSV (header, rows) with the same content as their JSONL samples.
CSV_SAMPLES = SampleTable("import_csv")


def jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def cli_import(path: Path, name: str, kind: str, language: str = "eng-Latn", **options: Any) -> str:
    """Run `manage.py import_task` and return what it printed."""
    out = StringIO()
    call_command("import_task", str(path), name=name, kind=kind, language=language, stdout=out, **options)
    return out.getvalue()


def upload(filename: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(filename, content, content_type="application/octet-stream")


def counts() -> tuple[int, int, int]:
    """Tasks, items and gold rows: what a refused import must leave exactly as it was."""
    return Task.objects.count(), Item.objects.count(), ItemGold.objects.count()


def gold_by_id(task: Task) -> dict[str, Any]:
    return dict(ItemGold.objects.filter(item__task=task).values_list("item__external_id", "value"))
