"""Asking a campaign's review when answers arrive on its task, debounced: the first answer after a review started
asks its review job again (`CampaignReview`, a job type of the layer) by a conditional UPDATE of the job's
`requested_at` (the one mark that a review was asked: a run in progress, started before it, is followed by another),
`control.submit`, and one message `countdown` seconds later (`hume.jobs.enqueue_on_commit`: kept in the outbox when
the broker is down); the answers until that job starts send nothing more, unless it has not started within a minute
after its countdown: then the next answer sends another. With no later answer, the layer's recovery finds a review
whose worker died (a lapsed lease) or whose message was lost (queued longer than a lease when a worker starts) and
sends it again (`JOB`). An annotator's submit never fails because of this. A campaign waiting for its judge's run
is reviewed when the run finishes (`judge_run_finished`, on annotation's `llm_run_finished` signal).

Every answer of the annotator's loop passes here (agreement/signals.py, after its commit), and most tasks have no
campaign: the first question, whether the task has a collecting campaign at all, is one prepared statement
(`COLLECTING_SQL`, annotation/core/rawsql.py) instead of the ORM query below, which cost each answer about 4,000
Python calls (1.2 ms of CPU) and a plan in PostgreSQL (docs/crowd.md, "The annotation loop beside Label Studio")."""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from agreement.campaigns.models import Campaign, CampaignReview
from annotation.core import rawsql
from hume import jobs
from hume.jobs import control
from hume.jobs.registry import JobType

log = logging.getLogger(__name__)

REVIEW_JOB = "agreement.review_campaign"
LOST_AFTER_SECONDS = 60  # past its countdown, a review that has not started is taken as lost

# The review's job type (registered in agreement/apps.py): its task takes the campaign's id, the row's key.
JOB = JobType(name="campaign review", model="agreement.CampaignReview", task=REVIEW_JOB,
              queued_since="requested_at")


# One index probe of the task's campaigns (the task_id index), kept prepared on PostgreSQL like the loop's own
# statements: a row when the task has a campaign collecting answers.
COLLECTING_SQL = (f"SELECT 1 FROM {Campaign._meta.db_table} WHERE {Campaign._meta.get_field('task').column} = "
                  "%(task_id)s AND state = %(collecting)s LIMIT 1")


def debounce_seconds() -> float:
    """Seconds between an answer and the review it asks (CAMPAIGN_REVIEW_DEBOUNCE_SECONDS, default 10)."""
    return float(getattr(settings, "CAMPAIGN_REVIEW_DEBOUNCE_SECONDS", 10))


def none_waiting(now: datetime, seconds: float) -> Q:
    """A review job with no review asked since it last started, or asked so long ago (past its countdown and a
    minute more) that its message is taken as lost."""
    return (Q(requested_at__isnull=True) | Q(requested_at__lt=now - timedelta(seconds=seconds + LOST_AFTER_SECONDS))
            | Q(started_at__gte=F("requested_at")))


def request_reviews(task_id: int) -> None:
    """Send a debounced review for each collecting campaign of the task that has none waiting."""
    if rawsql.one(COLLECTING_SQL, {"task_id": task_id, "collecting": Campaign.State.COLLECTING}) is None:
        return  # no campaign collecting on this task (most answers): one prepared probe, no ORM query
    seconds = debounce_seconds()
    now = timezone.now()
    waiting = CampaignReview.objects.filter(pk=OuterRef("pk")).exclude(none_waiting(now, seconds))
    asked = list(Campaign.objects.filter(task_id=task_id, state=Campaign.State.COLLECTING)
                 .exclude(Exists(waiting)).values_list("pk", flat=True))
    for campaign_id in asked:
        try:
            with transaction.atomic():
                ask_review(campaign_id, seconds, unless_waiting=now)
        except jobs.BrokerDown:
            log.warning("campaign %s: review queued in the outbox, the broker is down", campaign_id)


def ask_review(campaign_id: int, countdown: float, *, unless_waiting: datetime | None = None) -> bool:
    """Ask the campaign's review job (again) and send its message after the commit; call it in a transaction.
    `unless_waiting`: only when no review is waiting at that time (the conditional UPDATE of the job's row, which
    two answers at once pass one at a time). Returns whether it asked."""
    CampaignReview.objects.get_or_create(campaign_id=campaign_id)
    rows = CampaignReview.objects.filter(pk=campaign_id)
    gate = rows if unless_waiting is None else rows.filter(none_waiting(unless_waiting, countdown))
    if not gate.update(requested_at=timezone.now()):  # a run in progress sees it when it finishes and goes again
        return False
    control.submit(rows)  # a run a live worker holds stays its own
    jobs.enqueue_on_commit(REVIEW_JOB, campaign_id, countdown=countdown)
    return True


def judge_run_finished(sender: object, run_id: int, **kwargs: object) -> None:
    """An LLM run let go: review at once each campaign waiting for it (it plans its first batch, or fails)."""
    for campaign_id in Campaign.objects.filter(judge_run_id=run_id, state=Campaign.State.WAITING_FOR_THE_JUDGE
                                               ).values_list("pk", flat=True):
        try:
            with transaction.atomic():
                ask_review(campaign_id, 0)
        except jobs.BrokerDown:
            log.warning("campaign %s: review queued in the outbox, the broker is down", campaign_id)
