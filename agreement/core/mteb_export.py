"""Human results as MTEB TaskResult files, laid out like the MTEB results repository.

Mirrors the published human baseline (``mteb-hume-results/baseline__Human/2025_09_25/``): one
``<TaskName>.json`` per MTEB task under ``<org__model>/<revision>/`` with a ``model_meta.json`` beside it,
and beside the aggregate one ``<org__model>/annotator_<uuid>/`` folder per human annotator with their own
scores (the published ``annotator_<id>`` layout), so a re-import derives the same annotator-range CIs;
each subset carrying ``main_score``, the kind's metric keys, ``hf_subset``, ``languages``,
``scores_per_experiment`` (one entry per human annotator) and an ``agreement`` block. Several project tasks
that are subsets of one MTEB task (same ``mteb_task_name``, different ``mteb_subset``) become one file
with several subset entries. Only numbers already in the stored report are written: nothing is recomputed.
"""
from __future__ import annotations

import io
import json
import tempfile
import uuid
import zipfile
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from agreement.core.report_document import ReportDocument
from agreement.core.scoring import SCORERS
from tasks_app.models import Task

SPLIT = "test"
DATASET_REVISION = "human_evaluation"  # what the published human baseline writes
MTEB_FORMAT_VERSION = "1.18.0"  # what the published human baseline's files say; the human export mirrors them
MTEB_VERSION = "2.20.0"  # the MTEB whose protocols and score names models run here follow (model_mteb_export)
DEFAULT_MODEL_NAME = "hume/Human"  # a human reference on re-import (mteb_files.HUMAN_REFERENCE_MODELS)
ANNOTATOR_PREFIX = "annotator_"
# Annotator folders are named by a UUID derived from the annotator's name: stable across tasks and exports
# (so one person's files sit in one folder), and anonymous, like the published annotator_<uuid> folders.
ANNOTATOR_NAMESPACE = uuid.UUID("6f1c7a52-2d0e-4b8e-9a55-1d8c4f0e9b31")

# The agreement block's headline metric (the report's agreement_main) as the baseline names it.
HEADLINE_NAMES = {"ari_mean": "mean_pairwise_ari", "spearman_mean": "mean_pairwise_spearman"}


class ExportError(ValueError):
    """The tasks cannot be exported as asked; the message says which task and why."""


def mteb_keys(kind: str, scores: dict[str, Any]) -> dict[str, Any]:
    """A report's score dict under MTEB's key names (the kind's scorer declares them, as the baseline names
    them where it has the kind; likert keeps the report's per-axis names)."""
    names = SCORERS[kind].mteb_score_keys
    if names is None:
        return {k: v for k, v in scores.items() if v is not None}
    return {mteb: scores[ours] for ours, mteb in names.items() if scores.get(ours) is not None}


def agreement_block(doc: ReportDocument) -> dict[str, Any]:
    """The baseline's agreement block: headline metric, band, counts, and the kind's extra values (the kind's
    scorer shapes it: `mteb_agreement` in kinds/<name>/scorer.py and its bases)."""
    ours = doc.get("agreement_main") or ""
    headline = {"metric": HEADLINE_NAMES.get(ours, ours), "value": doc["agreement"].get(ours)}
    return SCORERS[doc["kind"]].mteb_agreement(doc, _counts(doc), headline)


def _counts(doc: ReportDocument) -> dict[str, Any]:
    """N, K and the total as HUME Table 8 counts them: N is texts, queries or items (the human block's
    `n`), never sets of texts; the kind's scorer counts the total (clustering: N × K, one per text)."""
    n = doc["human"].get("n") or doc["n_items"]
    total = SCORERS[doc["kind"]].mteb_total_annotations(doc, n)
    return {"n_annotators": doc["n_annotators"], "n_items": n, "total_annotations": total}


def subset_entry(task: Task, doc: ReportDocument) -> dict[str, Any]:
    """One subset of a TaskResult from one project task's stored report."""
    human = doc["human"]
    if human["main_score"] is None:
        raise ExportError(f"task {task.name!r} has no human main score ({human.get('reason') or 'undefined'})")
    entry = {**mteb_keys(doc["kind"], human["scores"]), "main_score": human["main_score"]}
    people = [a for a in doc["annotators"] if a["agent"] == "human"]
    if people:
        entry["scores_per_experiment"] = [mteb_keys(doc["kind"], a["scores"]) for a in people]
    entry["agreement"] = agreement_block(doc)
    entry["hf_subset"] = task.mteb_subset or "default"
    entry["languages"] = [task.language]
    return entry


def task_results(reports: list[tuple[Task, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """TaskResult documents keyed by MTEB task name; project tasks sharing a name become its subsets."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for task, doc in reports:
        name = task.mteb_task_name or task.name
        if "/" in name or "\\" in name or name.startswith("."):
            raise ExportError(f"task {task.name!r}: {name!r} cannot be a file name; set its MTEB task name")
        entry = subset_entry(task, doc)
        if any(e["hf_subset"] == entry["hf_subset"] for e in grouped[name]):
            raise ExportError(f"tasks of {name!r} share the hf_subset {entry['hf_subset']!r}: set mteb_subset")
        grouped[name].append(entry)
    return {name: {"dataset_revision": DATASET_REVISION, "task_name": name, "mteb_version": MTEB_FORMAT_VERSION,
                   "scores": {SPLIT: entries}, "evaluation_time": 0, "kg_co2_emissions": None}
            for name, entries in grouped.items()}


def annotator_folder(name: str) -> str:
    return f"{ANNOTATOR_PREFIX}{uuid.uuid5(ANNOTATOR_NAMESPACE, name)}"


def annotator_results(reports: list[tuple[Task, dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per human annotator (folder name), their own TaskResult documents: main score and the kind's
    metrics per subset, as in the published ``baseline__Human/annotator_<id>/`` files."""
    per_annotator: dict[str, list[tuple[Task, dict[str, Any]]]] = defaultdict(list)
    for task, doc in reports:
        main = doc["human"]["main_metric"]
        for person in doc["annotators"]:
            score = person["scores"].get(main)
            if person["agent"] != "human" or score is None:
                continue
            alone = {**doc, "human": {**doc["human"], "main_score": score, "scores": person["scores"]},
                     "annotators": []}
            per_annotator[annotator_folder(person["name"])].append((task, alone))
    result = {}
    for folder, docs in per_annotator.items():
        result[folder] = task_results(docs)
        for document in result[folder].values():
            for entry in document["scores"][SPLIT]:
                entry.pop("agreement", None)
    return result


def model_meta(model_name: str, revision: str, languages: list[str]) -> dict[str, Any]:
    """model_meta.json with the keys of the published baseline's, filled for human annotators."""
    return {
        "name": model_name, "revision": revision, "release_date": None, "languages": languages,
        "n_parameters": None, "memory_usage_mb": None, "max_tokens": None, "embed_dim": None, "license": None,
        "open_weights": True, "public_training_code": None, "public_training_data": None, "framework": [],
        "reference": None, "similarity_fn_name": None, "use_instructions": None, "training_datasets": None,
        "adapted_from": None, "superseded_by": None, "is_cross_encoder": None, "modalities": ["text"], "loader": None,
    }


def default_revision() -> str:
    return date.today().strftime("%Y_%m_%d")


def write_results(
    reports: list[tuple[Task, dict[str, Any]]], out: Path, *, model_name: str = DEFAULT_MODEL_NAME,
    revision: str | None = None,
) -> list[Path]:
    """Write ``out/<org__model>/<revision>/<TaskName>.json`` and model_meta.json; return the paths written."""
    if "/" not in model_name:
        raise ExportError(f"model name {model_name!r} must look like org/model (it becomes the folder org__model)")
    revision = revision or default_revision()
    if not revision or "/" in revision or revision in (".", ".."):
        raise ExportError(f"revision {revision!r} cannot be a folder name")
    folders = {revision: task_results(reports), **annotator_results(reports)}
    languages = sorted({task.language for task, _ in reports})
    written = []
    for name, results in folders.items():
        written += _write_folder(out / model_name.replace("/", "__", 1) / name, results,
                                 model_meta(model_name, name, languages))
    return written


def _write_folder(folder: Path, results: dict[str, dict[str, Any]], meta: dict[str, Any]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, result in sorted(results.items()):
        path = folder / f"{name}.json"
        path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    meta_path = folder / "model_meta.json"
    meta_path.write_text(json.dumps(meta, indent=4) + "\n", encoding="utf-8")
    return [*written, meta_path]


def results_zip(reports: list[tuple[Task, dict[str, Any]]], *, model_name: str = DEFAULT_MODEL_NAME,
                revision: str | None = None) -> bytes:
    """The folder :func:`write_results` writes, as zip bytes (the task page's download): the same files, so an
    unzipped download imports exactly like the CLI's output."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        paths = write_results(reports, root, model_name=model_name, revision=revision)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()
