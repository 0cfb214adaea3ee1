"""Asking a campaign's review when answers arrive on its task, debounced: the first answer after a review started
sets the campaign's `review_queued` by a conditional UPDATE and sends one job `countdown` seconds later through
the job layer (`hume.jobs.enqueue_on_commit`: kept in the outbox when the broker is down); the answers until that
job starts send nothing more. An annotator's submit never fails because of this."""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from agreement.campaigns.models import Campaign
from hume import jobs

log = logging.getLogger(__name__)

REVIEW_JOB = "agreement.review_campaign"


def debounce_seconds() -> float:
    """Seconds between an answer and the review it asks (CAMPAIGN_REVIEW_DEBOUNCE_SECONDS, default 10)."""
    return float(getattr(settings, "CAMPAIGN_REVIEW_DEBOUNCE_SECONDS", 10))


def request_reviews(task_id: int) -> None:
    """Send a debounced review for each collecting campaign of the task that has none waiting."""
    waiting = list(Campaign.objects.filter(task_id=task_id, state=Campaign.State.COLLECTING, review_queued=False)
                   .values_list("pk", flat=True))
    for campaign_id in waiting:
        try:
            with transaction.atomic():
                if Campaign.objects.filter(pk=campaign_id, review_queued=False).update(review_queued=True):
                    jobs.enqueue_on_commit(REVIEW_JOB, campaign_id, countdown=debounce_seconds())
        except jobs.BrokerDown:
            log.warning("campaign %s: review queued in the outbox, the broker is down", campaign_id)
