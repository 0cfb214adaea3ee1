"""A campaign's review (the worker's job, agreement/tasks.py `review_campaign`) and its stop by hand.

The review reads the campaign's items that have their `overlap` counted human answers (an item's value: the mean
of its people's numbers for the estimand), in the order they were completed (ties: the draw order), and the
judge's number on every pool item, and asks the engine (measures/campaign/engine.py `review`). Done: the
campaign's batches are stopped (nothing more handed out; an item a person holds can still be answered, after the
stopping point) and the final review kept. Waiting for the judge: once its run finished, the plan and the first
batch, or failed with the reason (`after_the_judge`). Collecting, with
every item handed out answered: the next batch, sized by the engine, never past the budget. It holds the
campaign (`hold`) for its transaction, so a review sent twice does its work once and a stop waits for it.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from agreement.campaigns.campaign_batches import draw_next_batch, drawn_items, stop_batches
from agreement.campaigns.campaign_numbers import CampaignError, Pool, labelled_by_people, read_pool, spec_for
from agreement.campaigns.models import JUDGE_RUN_FAILED, START_REFUSED, STOPPED_BY_HAND, Campaign
from agreement.campaigns.starting import plan_after_the_judge
from agreement.campaigns.study_links import batch_with_room, close_for_campaign, running_low
from agreement.ppi.estimands import numbers
from annotation.crowd import studies
from annotation.crowd.models import StudyLink
from annotation.llm.models import LLMRun
from annotation.models import Annotation, Annotator, Batch
from measures.campaign import engine

CAMPAIGN_LOCK_SPACE = 3434  # the advisory locks' first key: campaigns (the second is the campaign's id)


def campaign_labels(campaign: Campaign, pool: Pool) -> tuple[np.ndarray, np.ndarray, bool]:
    """(rows, values, every drawn item answered): the completed items' pool rows in completion order and their
    values; an item counts as answered once it has `overlap` answers, skips included."""
    drawn = drawn_items(campaign)
    draw_index = {pk: index for index, pk in enumerate(drawn)}
    answers = (Annotation.objects.counted().filter(item_id__in=drawn, annotator__agent=Annotator.Agent.HUMAN)
               .order_by("submitted_at", "pk").values_list("item_id", "value", "skipped", "submitted_at"))
    per_item: dict[int, list[tuple[float, Any]]] = defaultdict(list)
    answered: dict[int, int] = defaultdict(int)
    for item_id, value, skipped, submitted_at in answers:
        answered[item_id] += 1
        if not skipped:
            documents = [d["id"] for d in pool.payloads[item_id].get("documents", ())]
            per_item[item_id].append((numbers(value, pool.scale, documents)[pool.estimand], submitted_at))
    k = campaign.overlap
    complete = [pk for pk, got in per_item.items() if len(got) >= k]
    complete.sort(key=lambda pk: (per_item[pk][k - 1][1], draw_index[pk]))
    row_of = pool.row_of()
    rows = np.array([row_of[pk] for pk in complete], dtype=int)
    values = np.array([np.mean([v for v, _t in per_item[pk][:k]]) for pk in complete], dtype=float)
    return rows, values, all(answered[pk] >= k for pk in drawn)


def review_campaign(campaign_id: int, *, dry_batch_id: int | None = None) -> str:
    """Review the campaign now: store where it stands, and close it or hand out its next batch. Returns what it
    did, in words. `dry_batch_id`: a participant of the campaign's study link found nothing left for them in any
    batch up to that one (`link_ran_dry`): the next batch is drawn now if that batch is still the newest."""
    with transaction.atomic():
        hold(campaign_id)
        campaign = (Campaign.objects.select_related("task", "judge__user", "judge_run").filter(pk=campaign_id)
                    .first())
        if campaign is None:
            return "no such campaign"
        if campaign.state in (Campaign.State.DONE, Campaign.State.FAILED):
            return f"{campaign.state} already ({campaign.reason})"
        if campaign.state == Campaign.State.WAITING_FOR_THE_JUDGE:
            return after_the_judge(campaign)
        _estimand, pool = read_pool(campaign.task, campaign.judge.name, campaign.estimand)
        rows, values, all_answered = campaign_labels(campaign, pool)
        spec = spec_for(pool.bounds, campaign.target_half_width, campaign.level, campaign.budget_labels,
                        campaign.overlap, campaign.sampling)
        if rows.size == 0:  # nothing to size a batch by: a dry link gets the smallest later batch
            if dry_batch_id is None or not _wants_next(campaign, False, dry_batch_id):
                return "no item labelled yet"
            return _draw_next(campaign, pool, spec, engine.MIN_BATCH, all_answered, "no item labelled yet",
                              move_link=True)
        review = engine.review(pool.judge, rows, values, spec, campaign.t_star)
        campaign.review = json_safe({**review.as_dict(), "items_labelled": int(rows.size),
                                     "labels_received": int(rows.size) * campaign.overlap})
        campaign.reviewed_at = timezone.now()
        if review.state == engine.DONE:
            finish(campaign, review.reason)
            return f"done: {review.reason}"
        campaign.save(update_fields=["review", "reviewed_at"])
        where = f"±{review.half_width:.4g} after {review.labels_used} labels"
        if not _wants_next(campaign, all_answered, dry_batch_id):
            return f"collecting: {where}"
        return _draw_next(campaign, pool, spec, review.next_batch_items, all_answered, where,
                          move_link=all_answered or dry_batch_id is not None)


def _wants_next(campaign: Campaign, all_answered: bool, dry_batch_id: int | None) -> bool:
    """Whether to draw the next batch now: named people once every item handed out is answered; a study link
    also when its batch runs low (study_links.py `running_low`), or at once when a participant found the newest
    batch dry (`dry_batch_id`; a batch drawn since, by another participant's request, is not dry)."""
    if not campaign.study_settings:
        return all_answered
    newest = campaign.batches.order_by("-created_at", "-pk").first()
    if newest is None:
        return False
    if dry_batch_id is not None:
        return newest.pk == dry_batch_id
    return all_answered or running_low(campaign, newest)


def _draw_next(campaign: Campaign, pool: Pool, spec: engine.CampaignSpec, wanted: int, all_answered: bool,
               where: str, *, move_link: bool) -> str:
    """Draw the next batch of `wanted` items, never past the budget or the items no person answered (a study link
    moved on to it when `move_link`); when none is left and every item handed out is answered, the campaign is
    done (budget spent, or every item labelled)."""
    drawn = set(drawn_items(campaign))
    room = spec.budget_items(len(pool.item_ids)) - len(drawn)
    free = len(set(pool.item_ids) - drawn - labelled_by_people(campaign.task))
    size = min(wanted, room, free)
    if size < 1:  # the budget is spent, or no item is left that no person has answered
        if not all_answered:  # answers still to come on the items handed out: the review after them decides
            return f"collecting: {where}; every item the budget pays for is handed out"
        reason = engine.BUDGET_SPENT if room < 1 else engine.POOL_LABELLED
        finish(campaign, reason)
        return f"done: {reason}"
    batch = draw_next_batch(campaign, size, move_link=move_link)
    return f"collecting: {where}; next batch {batch.name!r} of {size} items"


def link_ran_dry(sender: Any, link_id: int, batch_id: int, annotator_id: int, **kwargs: Any) -> None:
    """A participant of a study link found nothing left for them in its batch `batch_id` (annotation's
    `study_link_ran_dry`, sent in their request): when the link is a collecting campaign's people and still points
    there, point it at the first batch with an item for them (one the review drew ahead, or an older one whose
    items came back), or review now, drawing the next batch. All under the campaign's hold, so participants who
    run dry at once move the link once and draw one batch."""
    campaign = Campaign.objects.filter(study_link_id=link_id, state=Campaign.State.COLLECTING).first()
    if campaign is None:
        return
    with transaction.atomic():
        hold(campaign.pk)
        link = StudyLink.objects.get(pk=link_id)
        if link.batch_id != batch_id:  # another participant's request moved it meanwhile: they follow it
            return
        room = batch_with_room(campaign, annotator_id, besides=batch_id)
        if room is not None:
            studies.follow_batch(link, Batch.objects.get(pk=room))
            return
        newest = campaign.batches.order_by("-created_at", "-pk").values_list("pk", flat=True).first()
    # no batch has an item for them: the review draws the next one, unless another request drew it meanwhile
    review_campaign(campaign.pk, dry_batch_id=newest)


def after_the_judge(campaign: Campaign) -> str:
    """A campaign waiting for its judge's run (judge_runs.py): still waiting while the run is queued or running;
    once it is done, the plan and the first batch (collecting); once it failed or was cancelled, or when the plan
    is refused (a budget under the first batch, a target out of reach, items the judge still missed): failed, with
    the reason and the problem in words. Call it holding the campaign."""
    run = campaign.judge_run
    if run is not None and run.status in LLMRun.ACTIVE:
        return f"{Campaign.State.WAITING_FOR_THE_JUDGE}: run {run.pk} is {run.state}"
    if run is None or run.status != LLMRun.Status.DONE:
        what = "was deleted" if run is None else f"{run.status}" + (f": {run.error}" if run.error else "")
        return fail(campaign, JUDGE_RUN_FAILED, f"the judge's run {what}")
    try:
        with transaction.atomic():
            plan_after_the_judge(campaign)
    except CampaignError as problem:
        return fail(campaign, START_REFUSED, str(problem))
    campaign.state = Campaign.State.COLLECTING
    campaign.save(update_fields=["state"])
    return f"collecting: the judge's run {run.pk} is done; the first batch is with the people"


def fail(campaign: Campaign, reason: str, problem: str) -> str:
    """Mark the campaign failed for `reason`, `problem` saying what went wrong; nothing was handed out."""
    campaign.state, campaign.reason, campaign.problem = Campaign.State.FAILED, reason, problem
    campaign.finished_at = timezone.now()
    campaign.save(update_fields=["state", "reason", "problem", "finished_at"])
    return f"failed: {reason}: {problem}"


def hold(campaign_id: int) -> None:
    """Hold the campaign for the current transaction against another review or a stop. On PostgreSQL a
    transaction-level advisory lock, not the row's lock: an answer's commit (which asks a review) must not
    wait for a review's reading and arithmetic; elsewhere (SQLite) a write holds the database."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [CAMPAIGN_LOCK_SPACE, campaign_id])
    else:
        Campaign.objects.select_for_update().filter(pk=campaign_id).exists()


def finish(campaign: Campaign, reason: str) -> None:
    """Mark the campaign done for `reason` and stop its batches (call it holding the campaign's row)."""
    campaign.state, campaign.reason, campaign.finished_at = Campaign.State.DONE, reason, timezone.now()
    campaign.save(update_fields=["state", "reason", "finished_at", "review", "reviewed_at"])
    stop_batches(campaign)
    close_for_campaign(campaign)


def stop_campaign(campaign: Campaign) -> Campaign:
    """Stop by hand: done, `stopped by hand`, batches stopped; a campaign done already is left as it is."""
    with transaction.atomic():
        hold(campaign.pk)
        campaign = Campaign.objects.get(pk=campaign.pk)
        if campaign.state in (Campaign.State.COLLECTING, Campaign.State.WAITING_FOR_THE_JUDGE):
            finish(campaign, STOPPED_BY_HAND)
    return campaign


def json_safe(data: dict[str, Any]) -> dict[str, Any]:
    """The review's numbers as plain JSON (numpy scalars become Python numbers)."""
    return json.loads(json.dumps(data, default=lambda x: x.item() if hasattr(x, "item") else str(x)))
