"""In-app model runs as model entries of the human–model comparison (Table 1, per-task tables, win rates).

A task joins when it has an MTEB task name (as for its humans). The entry is named after the model's MTEB
name when it has one, marked "(run here)", so the in-app run of sentence-transformers/all-MiniLM-L6-v2 sits
next to the imported MTEB result of the same model and is recognisably the same model, yet kept apart (it
is scored on the study's items, not on MTEB's full split). The score is the run's main score against gold.
"""
from __future__ import annotations

from typing import Any

from agreement.model_runs.models import ModelRun
from agreement.model_runs.rows import latest_runs
from tasks_app.models import Task

SUFFIX = " (run here)"


def entry_name(run: ModelRun) -> str:
    return (run.model.mteb_name or run.model.name) + SUFFIX


def add_model_run_entries(comparison: Any) -> None:
    from agreement.results.compare import Entry
    from agreement.results.leaderboard import SubsetScore

    for task in Task.objects.exclude(mteb_task_name=""):
        for run in latest_runs(task.pk):
            score = ((run.scores or {}).get("gold") or {}).get("main_score") if run.status == "done" else None
            if score is None:
                continue
            name = entry_name(run)
            comparison.entries.setdefault(name, Entry(name, "model", "this project", run.model.revision[:12]))
            comparison.scores.append(SubsetScore(name, "model", task.mteb_task_name, task.language, float(score)))
