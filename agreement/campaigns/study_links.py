"""A campaign whose people are a crowd study link (annotation/crowd/, docs/campaigns.md "A study link as the
people"): the start checks the link's settings (or the named link) before anything is written; the first batch
makes the link (or takes the named one). The review draws the next batch while the one the link serves runs low
(`running_low`); it waits until that batch runs dry for a participant, whose request then points the link at the
first batch with an item for them (`batch_with_room`: the one drawn ahead, or an older one whose items came
back; reviewing.py `link_ran_dry`), or draws one then when none has. New arrivals are
assigned to the link's batch, and a running participant follows once their batch has nothing left for them (their
quota counted over every batch), so no one is turned away while the campaign collects and has budget, and a batch
is drained before the next one is handed out.
Once the campaign is done its batches hand out nothing, and a participant mid-way gets the completion code for the
work they did (`close_for_campaign`: the link's minimum for the code becomes one answer)."""
from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F
from django.utils import timezone

from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.models import Campaign
from annotation.crowd import studies
from annotation.crowd.models import Participant, StudyLink
from annotation.models import Annotation, Batch, BatchItem, Hold
from tasks_app.models import Task

DEFAULT_QUOTA = 20
DEFAULT_MINUTES = 60
# The batch the link serves runs low when the items that still take an answer and nobody holds are at most this
# share of it, or one participant's quota, whichever is larger: the next batch is drawn then.
LOW_SHARE = 0.2


@dataclass(frozen=True)
class StudyLinkWanted:
    """The study link a campaign's people come through: an existing link's id (`existing`), or a new link with
    these settings (annotation/crowd/studies.py `LinkSettings`; an empty completion code: a random one)."""

    existing: int | None = None
    quota: int = DEFAULT_QUOTA
    minutes: int = DEFAULT_MINUTES
    completion_code: str = ""
    platform: str = StudyLink.Platform.GENERIC
    gold_rate: float = 0.0


def read_wanted(value: Any, **settings: Any) -> StudyLinkWanted | None:
    """The CLI's and API's `study_link` ("new", or an existing link's id) with the new link's settings; None when
    no study link is asked. CampaignError naming the field for a value that is neither."""
    if value in (None, "", False):
        return None
    given = {name: got for name, got in settings.items() if got is not None}
    if value in (True, "new"):
        return StudyLinkWanted(**given)
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return StudyLinkWanted(existing=int(value), **given)
    raise CampaignError(f"study_link: must be 'new' or an existing study link's id, got {str(value)[:40]!r}")


def check_wanted(task: Task, wanted: StudyLinkWanted) -> None:
    """Refuse, before anything is written, a named link that is unknown, of another task, closed, or already a
    campaign's people, and new settings the crowd study refuses on any batch (annotation/crowd/studies.py
    `link_problems`: the time limit, the code, the platform, a gold rate on a task without gold, …)."""
    if wanted.existing is not None:
        link = StudyLink.objects.select_related("batch__task").filter(pk=wanted.existing).first()
        if link is None:
            raise CampaignError(f"study_link: no study link with id {wanted.existing}")
        if link.batch.task_id != task.pk:
            raise CampaignError(f"study_link: study link {link.pk} belongs to task {link.batch.task.name!r}, not to "
                                f"the campaign's task {task.name!r}")
        if not link.is_open:
            raise CampaignError(f"study_link: study link {link.pk} is closed")
        other = Campaign.objects.filter(study_link=link).values_list("name", flat=True).first()
        if other is not None:
            raise CampaignError(f"study_link: study link {link.pk} is already the people of campaign {other!r}")
        return
    settings = _link_settings(wanted)
    problems = studies.settings_problems(task, settings)
    if problems:
        raise CampaignError("; ".join(f"study_link {name}: {message}" for name, message in problems))


def _link_settings(wanted: StudyLinkWanted) -> studies.LinkSettings:
    return studies.LinkSettings(quota=wanted.quota, minutes=wanted.minutes,
                                completion_code=wanted.completion_code or secrets.token_hex(4).upper(),
                                platform=wanted.platform, gold_rate=wanted.gold_rate)


def attach(campaign: Campaign, batch: Batch, *, move_link: bool = True) -> None:
    """The campaign drew `batch`: make its study link on it (or take the named one) with the first batch; point
    the link at a later one when `move_link` (drawn for a dry batch; one drawn ahead waits until the link's batch
    runs dry, `reviewing.link_ran_dry`). Call it in the transaction that wrote the batch; CampaignError (the whole
    start rolled back) when the crowd study refuses the settings on it."""
    if not campaign.study_settings:
        return
    if campaign.study_link_id is not None:
        if move_link:
            studies.follow_batch(campaign.study_link, batch)
        return
    wanted = StudyLinkWanted(**campaign.study_settings)
    if wanted.existing is not None:
        link = StudyLink.objects.get(pk=wanted.existing)
        studies.follow_batch(link, batch)
    else:
        try:
            link = studies.create_study_link(batch, _link_settings(wanted), created_by=campaign.created_by)
        except studies.StudyProblem as problem:
            raise CampaignError(f"study_link {problem}") from None
    campaign.study_link = link
    campaign.save(update_fields=["study_link"])


def batch_with_room(campaign: Campaign, annotator_id: int, *, besides: int) -> int | None:
    """The first of the campaign's batches but `besides` (the one the engine just found nothing in for them), in
    draw order, that hands out an item the annotator has not answered, with fewer than k answers and no live
    hold: a batch drawn ahead, or an older one whose items came back (a participant returned); None when there is
    none."""
    now = timezone.now()
    return (BatchItem.objects.filter(batch__campaigns=campaign, batch__hands_out=True, batch__is_open=True,
                                     human_answers__lt=F("batch__overlap")).exclude(batch_id=besides)
            .exclude(pk__in=Hold.objects.filter(expires_at__gt=now).values("batch_item_id"))
            .exclude(item_id__in=Annotation.objects.filter(annotator_id=annotator_id).values("item_id"))
            .order_by("batch__created_at", "batch_id", "position").values_list("batch_id", flat=True).first())


def running_low(campaign: Campaign, batch: Batch) -> bool:
    """Whether `batch`, the campaign's newest, is the one the link serves and has at most `LOW_SHARE` of its
    items (or one quota) that still take an answer and nobody holds: the campaign then draws its next batch
    before this one runs dry (a batch drawn ahead and not yet served is not low)."""
    link = campaign.study_link
    if link is not None and link.batch_id != batch.pk:
        return False
    items = BatchItem.objects.filter(batch=batch)
    n_items = items.count()
    free = items.filter(human_answers__lt=batch.overlap).exclude(
        pk__in=Hold.objects.filter(batch_item__batch=batch, expires_at__gt=timezone.now()).values("batch_item_id")
    ).count()
    return free <= max(math.ceil(LOW_SHARE * n_items), link.quota if link is not None else 0)


def close_for_campaign(campaign: Campaign) -> None:
    """The campaign is done (its batches stopped): a participant mid-way gets the completion code for the work they
    did (the link's minimum for the code becomes one answer); a new arrival is told the study is full."""
    if campaign.study_link_id is not None:
        StudyLink.objects.filter(pk=campaign.study_link_id).update(min_answers=1)


def link_data(campaign: Campaign) -> dict[str, Any] | None:
    """The study link in the status JSON: its id, address (path; the site's address goes before it), quota and
    time limit, and the participants and answers so far; None for named people."""
    link = campaign.study_link
    if link is None:
        return None
    stages = dict.fromkeys(Participant.Stage.values, 0)
    stages.update(Participant.objects.filter(link=link).values_list("stage").annotate(n=Count("pk"))
                  .order_by().values_list("stage", "n"))
    answers = Annotation.objects.filter(annotator__participant__link=link, skipped=False).count()
    return {"id": link.pk, "url": f"/study/{link.token}/", "platform": link.platform, "quota": link.quota,
            "minutes": link.minutes, "open": link.is_open, "participants": sum(stages.values()),
            "completed": stages[Participant.Stage.COMPLETED], "returned": stages[Participant.Stage.RETURNED],
            "answers": answers}
