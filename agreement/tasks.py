"""Celery tasks of the agreement app."""
from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db.models import F

from agreement.campaigns import review_job as campaign_reviews
from agreement.core import judge_panels, reports
from agreement.models import Report
from agreement.ppi import estimate_jobs as ppi_jobs
from annotation.llm.models import LLMJudgePanel
from hume.jobs import recovery

log = logging.getLogger(__name__)


@shared_task(name="agreement.ping")
def ping(payload: str = "pong") -> str:
    """A trivial round trip through Redis and a worker: used by health checks and tests."""
    return payload


@shared_task(name="agreement.compute_report", bind=True, acks_late=True, reject_on_worker_lost=True)
def compute_report(self, task_id: int, aggregation: str | None = None) -> str:
    """Compute the task's agreement report if this message wins the claim.

    acks_late + reject_on_worker_lost: a pool process killed mid-run makes its worker requeue the message,
    and the redelivery (same message id) takes the claim over. A whole worker killed outright is noticed by
    its lapsed lease (hume/jobs/lease.py; re-sent by hume/jobs/recovery.py). Any other copy of the message
    finds the report not queued and returns at once, unless a re-run was asked during the run: then it looks
    again when the run's lease could lapse, so a Recompute on a dead run takes it over. The report's parameters
    (its aggregation) are read from its row; `aggregation` is only for a message an older version sent.
    """
    outcome = reports.run_report(task_id, claimed_by=self.request.id or "",
                                 computed_in=f"worker {self.request.hostname}", aggregation=aggregation)
    if outcome == "not claimed: report is running":
        wait = rerun_wait(task_id)
        if wait is not None:
            recovery.look_again("report", task_id, *([] if aggregation is None else [aggregation]), after=wait)
            return f"{outcome}; a re-run was asked meanwhile: looking again in {wait:.0f} s"
    return outcome


def rerun_wait(task_id: int) -> float | None:
    """Seconds until the running claim may lapse, if a re-run was asked after that run started (a Recompute
    on a run whose worker may be dead), else None. A live run renews its lease and, when done, queues the
    re-run itself (reports.finish), so the look again finds nothing to do; a dead run is taken over."""
    return recovery.until_lapsed(Report.objects.filter(task_id=task_id, requested_at__gt=F("started_at")))


@shared_task(name="agreement.compute_ppi", bind=True, acks_late=True, reject_on_worker_lost=True)
def compute_ppi(self, estimate_id: int) -> str:
    """A task's PPI estimates with one judge (docs/ppi.md), if this message wins the row's claim."""
    return ppi_jobs.run_ppi(estimate_id, computed_in=f"worker {self.request.hostname}",
                            claimed_by=self.request.id or "")


@shared_task(name="agreement.refresh_judge_panel")
def refresh_judge_panel(panel_id: int) -> dict[str, Any]:
    """Recompute a panel's mean of judges and agreement from the judges' current annotations."""
    return judge_panels.refresh_panel(LLMJudgePanel.objects.select_related("task").get(pk=panel_id))


@shared_task(name="agreement.review_campaign", bind=True, acks_late=True, reject_on_worker_lost=True)
def review_campaign(self, campaign_id: int) -> str:
    """Review a campaign after its answers changed, if this message wins the claim of its review job
    (agreement/campaigns/review_job.py); harmless when sent twice."""
    return campaign_reviews.run_review(campaign_id, claimed_by=self.request.id or "")
