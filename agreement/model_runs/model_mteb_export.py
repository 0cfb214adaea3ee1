"""A model run's scores as MTEB TaskResult files, beside the human export (agreement/core/mteb_export.py).

`<org__model>/<revision>/<TaskName>.json` plus model_meta.json; the model's folder name is its MTEB name
when it has one (so an in-app run of all-MiniLM-L6-v2 sits where MTEB's own results for it do), else
`hume-inapp/<name>`; the revision folder is the first 12 characters of its recorded revision. Scores
against gold only: that is what an MTEB result means. The files say `"mteb_version": "2.20.0"`, the MTEB whose
protocols and score names the runs follow (docs/models-in-app.md).
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from agreement.core.mteb_export import MTEB_VERSION, SPLIT, ExportError, model_meta
from agreement.model_runs.models import EmbeddingModel, ModelRun

FIGURES = ("main_score", "cosine_spearman", "cosine_pearson", "map_at_1000", "mrr_at_10", "ndcg_at_10",
           "recall_at_10", "v_measure", "v_measure_agglomerative", "accuracy", "f1", "f1_weighted", "precision",
           "precision_weighted", "recall", "recall_weighted", "sage_mean")


def folder_names(model: EmbeddingModel) -> tuple[str, str]:
    name = model.mteb_name or f"hume-inapp/{model.name}"
    revision = re.sub(r"[^A-Za-z0-9_.-]", "_", model.revision[:12]) or "no_revision"
    return name, revision


def subset_entry(run: ModelRun) -> dict[str, Any]:
    gold = (run.scores or {}).get("gold") or {}
    if run.status != ModelRun.Status.DONE or gold.get("main_score") is None:
        raise ExportError(f"{run.model.name} on {run.task.name!r} has no score against gold "
                          f"({run.status}{': ' + gold['reason'] if gold.get('reason') else ''})")
    entry = {k: gold[k] for k in FIGURES if isinstance(gold.get(k), (int, float))}
    entry["hf_subset"] = run.task.mteb_subset or "default"
    entry["languages"] = [run.task.language]
    return entry


def write_run_results(runs: list[ModelRun], out: Path) -> list[Path]:
    """Write one folder per model; tasks sharing an MTEB task name become subsets of one file."""
    by_model: dict[int, list[ModelRun]] = defaultdict(list)
    for run in runs:
        by_model[run.model_id].append(run)
    written = []
    for model_runs in by_model.values():
        model = model_runs[0].model
        name, revision = folder_names(model)
        files: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for run in model_runs:
            files[run.task.mteb_task_name or run.task.name].append(subset_entry(run))
        folder = out / name.replace("/", "__", 1) / revision
        folder.mkdir(parents=True, exist_ok=True)
        for task_name, entries in sorted(files.items()):
            if "/" in task_name or task_name.startswith("."):
                raise ExportError(f"{task_name!r} cannot be a file name; set the task's MTEB task name")
            doc = {"dataset_revision": model_runs[0].task.dataset_revision or "hume_items", "task_name": task_name,
                   "mteb_version": MTEB_VERSION, "scores": {SPLIT: entries}, "evaluation_time": 0,
                   "kg_co2_emissions": None}
            path = folder / f"{task_name}.json"
            path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(path)
        meta = model_meta(name, revision, sorted({r.task.language for r in model_runs}))
        meta |= {"embed_dim": model.dimensions, "similarity_fn_name": "cosine" if model.is_encoder else model.metric}
        (folder / "model_meta.json").write_text(json.dumps(meta, indent=4) + "\n", encoding="utf-8")
        written.append(folder / "model_meta.json")
    return written
