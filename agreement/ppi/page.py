"""What the report page's PPI panel shows (templates/ppi/_panel.html): each judge's stored estimates, the
two intervals of each as a small plot, and the judges that may be asked. Reads stored rows only; a worker
computes (agreement/ppi/estimate_jobs.py)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Exists, OuterRef

from agreement.core.exclusions import computed_before_exclusion, exclusion_changed_at
from agreement.ppi.models import PPIEstimate
from annotation.models import Annotation, Annotator
from hume.roles import is_admin
from tasks_app.models import Task

PLOT_WIDTH, PLOT_PAD = 240, 12


def interval_plot(row: dict[str, Any]) -> dict[str, float] | None:
    """x positions (SVG units) of both intervals and estimates on one axis spanning them, or None."""
    ends = [row[k] for k in ("ci_low", "ci_high", "classical_low", "classical_high")]
    if any(v is None for v in ends):
        return None
    lo, hi = min(ends), max(ends)
    span = (hi - lo) or 1.0

    def x(value: float) -> float:
        return round(PLOT_PAD + (value - lo) / span * (PLOT_WIDTH - 2 * PLOT_PAD), 1)

    return {"ppi_low": x(row["ci_low"]), "ppi_high": x(row["ci_high"]), "ppi_mid": x(row["estimate"]),
            "classical_low": x(row["classical_low"]), "classical_high": x(row["classical_high"]),
            "classical_mid": x(row["classical_estimate"]), "width": PLOT_WIDTH}


def panel_row(estimate: PPIEstimate, exclusion_changed_at: datetime | None = None) -> dict[str, Any]:
    """One judge's stored estimates for the panel; `before_exclusion` when they were computed before the task's
    latest exclusion or undo (`exclusion_changed_at`), so they still read the answers it changed."""
    doc = estimate.document or {}
    rows = [{**r, "plot": interval_plot(r)} for r in doc.get("estimates", []) if r["scope"] == "task"]
    sequences = {s["estimand"]: s for s in doc.get("sequences", [])}
    for r in rows:
        sequence = sequences.get(r["estimand"], {})
        r["sequence_last"] = sequence.get("looks", [None])[-1] if sequence.get("looks") else None
        r["target_reached_at"] = sequence.get("target_reached_at")
    return {"judge": estimate.judge, "status": estimate.status, "error": estimate.error, "alpha": estimate.alpha,
            "target_half_width": estimate.target_half_width, "rows": rows, "doc": doc,
            "plan": doc.get("plan"), "pending": estimate.status in (PPIEstimate.Status.QUEUED,
                                                                    PPIEstimate.Status.RUNNING),
            "before_exclusion": computed_before_exclusion(estimate.finished_at, exclusion_changed_at)}


def judges_of(task: Task) -> list[str]:
    """LLM annotators with at least one answer on the task: the judges the form offers."""
    # One EXISTS per LLM annotator (few), each stopping at its first answer, rather than a scan of the task's
    # answers on every report page view.
    answered = Exists(Annotation.objects.counted().filter(annotator=OuterRef("pk"), item__task=task))
    return sorted(Annotator.objects.filter(agent=Annotator.Agent.LLM).filter(answered)
                  .values_list("user__username", flat=True))


def ppi_context(task: Task, user: Any) -> dict[str, Any]:
    estimates = list(PPIEstimate.objects.filter(task=task).order_by("judge"))
    changed_at = exclusion_changed_at(task) if estimates else None
    rows = [panel_row(e, changed_at) for e in estimates]
    return {"ppi_rows": rows, "ppi_judges": judges_of(task), "ppi_pending": any(r["pending"] for r in rows),
            "can_create_ppi_batch": is_admin(user)}
