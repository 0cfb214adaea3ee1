"""Running a campaign's review as a job of the layer (hume/jobs/): claim its `CampaignReview` row (capped like
every claim), review under a kept lease (reviewing.py; the campaign's own hold makes a review sent twice harmless),
finish, and go again after the debounce when answers asked for a review while it ran. A worker that dies
mid-review leaves a lease that lapses; the layer's recovery (`jobs.requeue_lapsed`, `jobs.resume`) sends the
review again (docs/campaigns.md)."""
from __future__ import annotations

from django.db.models import F, Q

from agreement.campaigns import reviewing
from agreement.campaigns.models import CampaignReview
from agreement.campaigns.review_queue import JOB, debounce_seconds
from hume.jobs import recovery
from hume.jobs.lease import claim
from hume.jobs.models import JobStatus


def run_review(campaign_id: int, claimed_by: str = "") -> str:
    """Review the campaign if this message wins the claim of its review job; what it did, in words."""
    rows = CampaignReview.objects.filter(pk=campaign_id)
    lease = claim(rows, claimed_by=claimed_by, max_attempts=JOB.max_attempts)
    if lease is None:
        return "not claimed: the review is running, done, or out of attempts"
    with lease.kept():
        try:
            outcome = reviewing.review_campaign(campaign_id)
        except Exception as problem:
            lease.fail(f"{type(problem).__name__}: {problem}")
            raise
    lease.finish(again_if=Q(requested_at__gt=F("started_at")))
    if rows.filter(status=JobStatus.QUEUED).exists():  # answers asked while it ran: their message found it held
        recovery.look_again(JOB.name, campaign_id, after=debounce_seconds())
        outcome += "; asked again while it ran: looking again"
    return outcome
