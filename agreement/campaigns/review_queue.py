"""Asking a campaign's review when answers arrive on its task, debounced: the first answer after a review started
sets the campaign's `review_requested_at` by a conditional UPDATE, asks its review job again (`CampaignReview`, a
job type of the layer: `control.submit`, and `requested_at` so a run in progress is followed by another) and
sends one message `countdown` seconds later (`hume.jobs.enqueue_on_commit`: kept in the outbox when the broker is
down); the answers until that job starts send nothing more, unless it has not started within a minute after its
countdown: then the next answer sends another. With no later answer, the layer's recovery finds a review whose
worker died (a lapsed lease) or whose message was lost (queued longer than a lease when a worker starts) and
sends it again (`JOB`). An annotator's submit never fails because of this."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agreement.campaigns.models import Campaign, CampaignReview
from hume import jobs
from hume.jobs import control
from hume.jobs.registry import JobType

log = logging.getLogger(__name__)

REVIEW_JOB = "agreement.review_campaign"
LOST_AFTER_SECONDS = 60  # past its countdown, a review that has not started is taken as lost

# The review's job type (registered in agreement/apps.py): its task takes the campaign's id, the row's key.
JOB = JobType(name="campaign review", model="agreement.CampaignReview", task=REVIEW_JOB,
              queued_since="requested_at")


def debounce_seconds() -> float:
    """Seconds between an answer and the review it asks (CAMPAIGN_REVIEW_DEBOUNCE_SECONDS, default 10)."""
    return float(getattr(settings, "CAMPAIGN_REVIEW_DEBOUNCE_SECONDS", 10))


def request_reviews(task_id: int) -> None:
    """Send a debounced review for each collecting campaign of the task that has none waiting."""
    seconds = debounce_seconds()
    now = timezone.now()
    none_waiting = Q(review_requested_at__isnull=True) | Q(
        review_requested_at__lt=now - timedelta(seconds=seconds + LOST_AFTER_SECONDS))
    waiting = list(Campaign.objects.filter(none_waiting, task_id=task_id, state=Campaign.State.COLLECTING)
                   .values_list("pk", flat=True))
    for campaign_id in waiting:
        try:
            with transaction.atomic():
                if Campaign.objects.filter(none_waiting, pk=campaign_id).update(review_requested_at=now):
                    ask_review(campaign_id, seconds)
        except jobs.BrokerDown:
            log.warning("campaign %s: review queued in the outbox, the broker is down", campaign_id)


def ask_review(campaign_id: int, countdown: float) -> None:
    """Ask the campaign's review job (again) and send its message after the commit; call it in a transaction
    holding the campaign's row (the debounce's UPDATE), which keeps two answers from creating the row at once."""
    CampaignReview.objects.get_or_create(campaign_id=campaign_id)
    rows = CampaignReview.objects.filter(pk=campaign_id)
    rows.update(requested_at=timezone.now())  # a run in progress sees it when it finishes and goes again
    control.submit(rows)  # a run a live worker holds stays its own
    jobs.enqueue_on_commit(REVIEW_JOB, campaign_id, countdown=countdown)
