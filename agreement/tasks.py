"""Celery tasks of the agreement app."""
from __future__ import annotations

from typing import Any

from celery import shared_task

from agreement import judge_panels, reports
from annotation.llm.models import LLMJudgePanel


@shared_task(name="agreement.ping")
def ping(payload: str = "pong") -> str:
    """A trivial round trip through Redis and a worker: used by health checks and tests."""
    return payload


@shared_task(name="agreement.compute_report", bind=True, acks_late=True, reject_on_worker_lost=True)
def compute_report(self, task_id: int) -> str:
    """Compute the task's agreement report if this message wins the claim.

    acks_late + reject_on_worker_lost: a worker killed mid-run leaves the message unacknowledged, so it is
    delivered again and the redelivery (same message id) takes the claim over. Any other copy of the
    message finds the report not queued and returns at once.
    """
    return reports.run_report(task_id, claimed_by=self.request.id or "", computed_in=f"worker {self.request.hostname}")


@shared_task(name="agreement.refresh_judge_panel")
def refresh_judge_panel(panel_id: int) -> dict[str, Any]:
    """Recompute a panel's mean of judges and agreement from the judges' current annotations."""
    return judge_panels.refresh_panel(LLMJudgePanel.objects.select_related("task").get(pk=panel_id))
