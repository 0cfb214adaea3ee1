"""Asking a campaign's review when answers arrive on its task, debounced: the first answer after a review started
sets the campaign's `review_requested_at` by a conditional UPDATE and sends one job `countdown` seconds later
through the job layer (`hume.jobs.enqueue_on_commit`: kept in the outbox when the broker is down); the answers
until that job starts send nothing more, unless it has not started within a minute after its countdown (its
message lost, its worker gone): then the next answer sends another. An annotator's submit never fails because of
this."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agreement.campaigns.models import Campaign
from hume import jobs

log = logging.getLogger(__name__)

REVIEW_JOB = "agreement.review_campaign"
LOST_AFTER_SECONDS = 60  # past its countdown, a review that has not started is taken as lost


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
                    jobs.enqueue_on_commit(REVIEW_JOB, campaign_id, countdown=seconds)
        except jobs.BrokerDown:
            log.warning("campaign %s: review queued in the outbox, the broker is down", campaign_id)
