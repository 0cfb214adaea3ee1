"""The model rows of a task, as reports, pages and the API show them: the latest run of each model."""
from __future__ import annotations

from typing import Any

from agreement.model_runs.evaluate import evaluation_of
from agreement.model_runs.models import ModelRun


def latest_runs(task_id: int) -> list[ModelRun]:
    runs = (ModelRun.objects.filter(task_id=task_id).select_related("model", "task")
            .order_by("model__name", "-created_at"))
    seen: dict[int, ModelRun] = {}
    for run in runs:
        seen.setdefault(run.model_id, run)
    return list(seen.values())


def protocol_note(run: ModelRun) -> str:
    """Which protocol scored the run, in words (the kind's model evaluation says: kinds/<name>/evaluation.py)."""
    gold = (run.scores or {}).get("gold") or {}
    return evaluation_of(run.task.kind).protocol_note(gold, run.protocol)


def run_row(run: ModelRun) -> dict[str, Any]:
    scores = run.scores or {}
    return {
        "model": run.model.describe(), "run_id": run.pk, "status": run.status, "progress": run.progress,
        "stage": run.stage,
        "error": run.error or None, "texts_encoded": run.texts_encoded,
        "device": run.device or None, "protocol": run.protocol, "protocol_note": protocol_note(run),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "gold": scores.get("gold"), "humans": scores.get("humans"), "significance": scores.get("significance"),
    }


def model_rows(task_id: int) -> list[dict[str, Any]]:
    """Every model's latest run on the task, finished or not, for the report JSON and pages."""
    return [run_row(run) for run in latest_runs(task_id)]


def rows_context(task_id: int, user: Any) -> dict[str, Any]:
    """What templates/model_runs/_model_rows.html needs; it polls itself while a run is queued or running."""
    from hume.roles import is_admin

    rows = model_rows(task_id)
    return {"model_rows": rows, "can_run_models": is_admin(user),
            "model_rows_pending": any(r["status"] not in ("done", "failed") for r in rows)}
