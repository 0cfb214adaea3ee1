"""Small datasets of every task kind, and helpers the import, sampling and annotation-import tests share."""
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

# kind → (import options, JSONL records, expected gold by external id)
SAMPLES: dict[str, tuple[dict[str, str], list[dict[str, Any]], dict[str, Any]]] = {
    "classification": (
        {"labels": "pos,neg"},
        [{"id": "c1", "text": "A wonderful film.", "label": "pos"}, {"id": "c2", "text": "Dull.", "label": "neg"},
         {"id": "c3", "text": "No gold on this one."}],
        {"c1": "pos", "c2": "neg"},
    ),
    "clustering": (
        {},
        [{"id": "k1", "sentences": ["Aarhus", "Bergen", "Odense"], "labels": ["dk", "no", "dk"]}],
        {"k1": ["dk", "no", "dk"]},
    ),
    "reranking": (
        {},
        [{"id": "q1", "query": "how do vaccines work", "instruction": "Judge the passage.",
          "candidates": [{"id": "p1", "text": "They train immunity.", "relevant": 1},
                         {"id": "p2", "text": "Paris is in France.", "relevant": 0}]},
         {"id": "q2", "query": "capital of Denmark", "positive": ["Copenhagen is the capital."],
          "negative": ["Oslo is in Norway.", "Cats sleep a lot."]}],
        {"q1": {"p1": 1, "p2": 0}},  # q2's candidate ids come from a deterministic shuffle: checked apart
    ),
    "graded_relevance": (
        {},
        [{"id": "g1", "query": "vitamin D deficiency", "documents": [
            {"id": "d1", "text": "Fatigue and bone pain.", "score": 9},
            {"id": "d2", "text": "Sunlight.", "score": 3}]}],
        {"g1": {"d1": 9.0, "d2": 3.0}},
    ),
    "sts": (
        {"scale": "0,5", "step": "0.5"},
        [{"id": "s1", "sentence1": "A man plays guitar.", "sentence2": "Someone plays a guitar.", "score": 4.8},
         {"id": "s2", "sentence1": "A dog runs.", "sentence2": "Stocks fell.", "score": 0}],
        {"s1": 4.8, "s2": 0},
    ),
    "pairwise": (
        {},
        [{"id": "p1", "context": "The council approved bike lanes.", "a": "Bike lanes approved.",
          "b": "The council met.", "preferred": "a"},
         {"id": "p2", "context": "Rain all week.", "a": "It rained.", "b": "Wet week.", "preferred": "tie"}],
        {"p1": "a", "p2": "tie"},
    ),
    "likert": (
        {"axes": "overall,coherence"},
        [{"id": "l1", "context": "Solar panels got better.", "text": "Panels improved.",
          "scores": {"overall": 6, "coherence": 7}}],
        {"l1": {"overall": 6, "coherence": 7}},
    ),
}

# The flat kinds again, as CSV (header, rows) with the same content as their JSONL samples.
CSV_SAMPLES: dict[str, tuple[list[str], list[list[str]]]] = {
    "classification": (["id", "text", "label"], [["c1", "A wonderful film.", "pos"], ["c2", "Dull.", "neg"],
                                                 ["c3", "No gold on this one.", ""]]),
    "sts": (["id", "sentence1", "sentence2", "score"], [["s1", "A man plays guitar.", "Someone plays a guitar.", "4.8"],
                                                        ["s2", "A dog runs.", "Stocks fell.", "0"]]),
    "pairwise": (["id", "context", "a", "b", "preferred"],
                 [["p1", "The council approved bike lanes.", "Bike lanes approved.", "The council met.", "a"],
                  ["p2", "Rain all week.", "It rained.", "Wet week.", "tie"]]),
    "likert": (["id", "context", "text", "overall", "coherence"],
               [["l1", "Solar panels got better.", "Panels improved.", "6", "7"]]),
}


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
