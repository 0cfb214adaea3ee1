"""Crowd studies, the operations: make a study link, let a participant arrive, walk them through consent,
instructions, practice and the work, serve check items between work items, and end their run.

The pages (annotation/crowd/views.py) and the commands call these. Work items go through the assignment
engine (annotation/core/assignment.py) exactly as for any annotator, so overlap k stays exact: a participant who
times out, leaves or declines is deactivated, which hands their held items back to the pool at once
(`set_active`). Check items never enter the engine or a report: their answers are CheckResult rows.

One browser per run: an arrival with a known platform id must bring the secret of the browser that started the
run (annotation/crowd/identity.py). No code without the work: a run that runs out of items before the answers
the code needs (`StudyLink.answers_for_code`) is returned, "full" or "too_few_answers", never completed.

One tab at a time: every page carries the tab token the participant's last arrival was given; a request with
another token gets a page saying so and changes nothing. A new arrival takes over only when the earlier tab
has been quiet for TAB_IDLE_SECONDS, or when the participant asks to continue here.

Queries per page (docs/crowd.md, "Under load"): a participant's request reads the link, the session and the
participant once, and what is the same for every participant of a study (which items are practice and
attention checks) comes from a per-process cache for CHECK_IDS_SECONDS, so no page's query count grows with the
participants or the items (tests/test_crowd_queries.py counts them).
"""
from __future__ import annotations

import random
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.core.annotators import create_annotator
from annotation.core.assignment import SubmitResult, next_item, release_holds, set_active, submit_answer
from annotation.core.models import Annotation, Batch, BatchAssignee, BatchItem, Hold
from annotation.core.signals import study_link_ran_dry
from annotation.crowd import checks, held, identity
from annotation.crowd.models import CheckResult, Participant, StudyLink
from tasks_app.models import Item, ItemCheck, ItemGold, Task

# Prolific's ids (PROLIFIC_PID, STUDY_ID, SESSION_ID) are 24 hexadecimal characters; another platform's
# participant id is up to 64 letters, digits, '-' or '_'.
PROLIFIC_ID = re.compile(r"[0-9a-fA-F]{24}")
PLATFORM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
COMPLETION_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_MINUTES = 24 * 60
# The largest count a link's PositiveIntegerField holds on PostgreSQL (32 bits); a larger one was a 500.
MAX_COUNT = 2**31 - 1
# A minimum time per item longer than the longest time limit would flag every answer.
MAX_MIN_SECONDS = MAX_MINUTES * 60
TAB_IDLE_SECONDS = 60
# A live tab's `tab_seen_at` is written again only when older than this: one write per page would be a row
# lock per request, and the idle test above needs the time to a few seconds, not to the request.
TAB_SEEN_REFRESH_SECONDS = 10
# How long a process keeps a study's practice and attention item ids (they are the task's, set at import).
CHECK_IDS_SECONDS = 60
RUNNING = (Participant.Stage.CONSENT, Participant.Stage.INSTRUCTIONS, Participant.Stage.PRACTICE,
           Participant.Stage.WORK)


class StudyProblem(ValueError):
    """Bad input to a study (a link's setting, an arrival's parameter): `field` names it, the message says why."""

    def __init__(self, field_name: str, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.field, self.message, self.status = field_name, message, status


# --- study links ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinkSettings:
    quota: int
    minutes: int
    completion_code: str
    platform: str = StudyLink.Platform.GENERIC
    consent: str = ""
    gold_rate: float = 0.0
    min_seconds: int = 0
    straightline_run: int = 0
    practice_failures_allowed: int = 1
    min_answers: int = 0  # answered items that earn the code when the batch runs out first (0: the quota)


def link_problems(batch: Batch, wanted: LinkSettings) -> list[tuple[str, str]]:
    """Every (field, message) that makes these settings unusable on `batch`; empty when they are fine."""
    problems = []
    n_items = BatchItem.objects.filter(batch=batch).count()
    if not batch.is_open:
        problems.append(("batch", f"the batch “{batch.name}” is closed; open it before making a study link"))
    if 1 <= wanted.quota and wanted.quota > n_items:
        problems.append(("quota", f"{_cut(wanted.quota)} is more than the {n_items} items of the batch "
                                  f"“{batch.name}”"))
    return problems + settings_problems(batch.task, wanted)


def settings_problems(task: Task, wanted: LinkSettings) -> list[tuple[str, str]]:
    """Every (field, message) that makes these settings unusable on any batch of `task` (all of `link_problems`
    but the batch's own: open, and holding the quota's items); a campaign checks them before its first batch."""
    problems = []
    if wanted.quota < 1:
        problems.append(("quota", f"must be at least 1, got {_cut(wanted.quota)}"))
    if not 1 <= wanted.minutes <= MAX_MINUTES:
        problems.append(("minutes", f"must be between 1 and {MAX_MINUTES}, got {_cut(wanted.minutes)}"))
    if not COMPLETION_CODE.fullmatch(wanted.completion_code or ""):
        problems.append(("completion_code", "must be 1 to 64 letters, digits, '-' or '_'"))
    if wanted.platform not in StudyLink.Platform.values:
        problems.append(("platform", f"must be one of {', '.join(StudyLink.Platform.values)}"))
    if not 0.0 <= wanted.gold_rate <= 1.0:
        problems.append(("gold_rate", f"must be between 0 and 1, got {wanted.gold_rate}"))
    for name, most in (("min_seconds", MAX_MIN_SECONDS), ("straightline_run", max(wanted.quota, 2)),
                       ("practice_failures_allowed", MAX_COUNT)):
        value = getattr(wanted, name)
        if not 0 <= value <= most:
            problems.append((name, f"must be from 0 to {most}, got {_cut(value)}"))
    if wanted.straightline_run == 1:
        problems.append(("straightline_run", "must be 0 (off) or at least 2"))
    if wanted.min_answers < 0 or wanted.min_answers > max(wanted.quota, 0):
        problems.append(("min_answers", f"must be from 0 (the quota) to the quota {wanted.quota}, "
                                        f"got {_cut(wanted.min_answers)}"))
    problems += _gold_problems(task, wanted)
    return problems


@dataclass(frozen=True)
class LinkFacts:
    """What the new-link form shows beside its fields: the batch's items (the largest quota) and the task's
    check items of each role, and its items with gold (where hidden gold checks are drawn from)."""

    n_items: int
    n_practice: int
    n_attention: int
    n_gold: int


def link_facts(batch: Batch) -> LinkFacts:
    roles = dict(ItemCheck.objects.filter(item__task_id=batch.task_id).values("role").annotate(n=Count("pk"))
                 .values_list("role", "n"))
    return LinkFacts(n_items=BatchItem.objects.filter(batch=batch).count(),
                     n_practice=roles.get(ItemCheck.Role.PRACTICE, 0),
                     n_attention=roles.get(ItemCheck.Role.ATTENTION, 0), n_gold=gold_items(batch).count())


def _gold_problems(task: Task, wanted: LinkSettings) -> list[tuple[str, str]]:
    """A gold rate that would show no hidden gold check: the task has no gold, or rate × quota rounds to none
    (checks come between work items, so after at most quota − 1 of them: checks.n_gold_checks)."""
    if wanted.gold_rate <= 0 or not 0 <= wanted.gold_rate <= 1 or wanted.quota < 1:
        return []
    if not _task_gold_items(task.pk).exists():
        return [("gold_rate", f"the task “{task.name}” has no gold items to draw hidden checks from")]
    if checks.n_gold_checks(wanted.quota, wanted.gold_rate, n_gold=MAX_COUNT) == 0:
        least = 1 / (wanted.quota - 1) if wanted.quota > 1 else None
        advice = f"at least {least:.3g}" if least is not None else "0 (a quota of 1 leaves no room for a check)"
        places = f"{wanted.quota - 1} place{'s' if wanted.quota != 2 else ''}"
        return [("gold_rate", f"{wanted.gold_rate:g} × a quota of {wanted.quota} shows no hidden gold check at all "
                              f"({wanted.gold_rate:g} × the {places} between work items rounds down to 0); set it to "
                              f"{advice}, or 0 for none")]
    return []


def _cut(value: object) -> str:
    """A number as an error quotes it: cut to 40 characters (a 5,001-digit value is not echoed whole)."""
    text = str(value)
    return text if len(text) <= 40 else text[:40] + "…"


def create_study_link(batch: Batch, wanted: LinkSettings, *, created_by: Any = None) -> StudyLink:
    """A new open link with an unguessable token (192 random bits). Raises StudyProblem for the first problem
    of `link_problems` (all of them are in its message)."""
    problems = link_problems(batch, wanted)
    if problems:
        raise StudyProblem(problems[0][0], "; ".join(f"{name}: {message}" for name, message in problems))
    return StudyLink.objects.create(token=secrets.token_urlsafe(24), batch=batch, created_by=created_by,
                                    **wanted.__dict__)


def gold_items(batch: Batch) -> Any:
    """The task's items with gold that are not check items: where hidden gold checks are drawn from."""
    return _task_gold_items(batch.task_id)


def _task_gold_items(task_id: int) -> Any:
    return Item.objects.filter(task_id=task_id, gold__isnull=False, item_check__isnull=True)


# --- arriving ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arrival:
    platform_id: str
    study_id: str = ""
    session_id: str = ""


def read_arrival(link: StudyLink, params: Mapping[str, str]) -> Arrival:
    """The participant's ids from the link's query string; StudyProblem naming the parameter when malformed.
    Prolific sends PROLIFIC_PID, STUDY_ID and SESSION_ID; other platforms a `participant` parameter."""
    if link.platform == StudyLink.Platform.PROLIFIC:
        ids = {name: params.get(name, "") for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
        if not ids["PROLIFIC_PID"]:
            raise StudyProblem("PROLIFIC_PID", "the link must be opened from Prolific (PROLIFIC_PID is missing)")
        for name, value in ids.items():
            if value and not PROLIFIC_ID.fullmatch(value):
                raise StudyProblem(name, "is not a Prolific id (24 hexadecimal characters)")
        return Arrival(ids["PROLIFIC_PID"], ids["STUDY_ID"], ids["SESSION_ID"])
    participant = params.get("participant", "")
    if not participant:
        raise StudyProblem("participant", "the link must carry your participant id (participant=…)")
    if not PLATFORM_ID.fullmatch(participant):
        raise StudyProblem("participant", "must be 1 to 64 letters, digits, '-' or '_'")
    return Arrival(participant)


def refuse_if_closed(link: StudyLink) -> None:
    if not (link.is_open and link.batch.is_open):
        raise StudyProblem("study", "This study is closed: it no longer takes participants or answers. "
                                    "Please return it on your platform.", status=410)


@dataclass(frozen=True)
class Admission:
    """A participant let in by an arrival, and the secret their browser keeps (annotation/crowd/identity.py);
    `tab`: a new participant's first tab token, given with the row (no other tab can hold a run just made), so
    the arrival needs no `open_tab`; empty for a returning one."""

    participant: Participant
    secret: str
    tab: str = ""


def arrive(link: StudyLink, arrival: Arrival, *, secret: Any = "", now: datetime | None = None) -> Admission:
    """The participant of this study with this platform id: made on first arrival (an annotator of the batch's
    language assigned to the link's batch, nothing else, bound to this browser by a new secret; returned at once,
    "full", when no item of the batch takes an answer any more), the same one on
    a later arrival of the browser that holds `secret` (resume). Raises identity.AlreadyStarted when the id's
    run is bound to another browser; nothing is written then."""
    now = now or timezone.now()
    refuse_if_closed(link)
    expire_overdue(now=now)
    found = held.participant_with_platform_id(link, arrival.platform_id)
    if found is None:
        try:
            admission = _new_participant(link, arrival, now)
        except IntegrityError:  # the same id arrived twice at once: the other request made it (and holds it)
            found = Participant.objects.get(link=link, platform_id=arrival.platform_id)
        else:
            participant = admission.participant
            # every item has its k answers, or the batch was stopped: nothing to do, no code; unless the link
            # moves on to a next batch (a campaign's link, `move_on`)
            if not _has_room(link.batch) and not (move_on(participant) and _has_room(participant.link.batch)):
                end(participant, Participant.Stage.RETURNED, reason="full", now=now)
            return admission
    secret = identity.claim(found, secret)
    if arrival.session_id and arrival.session_id != found.platform_session_id:
        found.platform_session_id = arrival.session_id
        found.save(update_fields=["platform_session_id"])
    return Admission(found, secret)


def _new_participant(link: StudyLink, arrival: Arrival, now: datetime) -> Admission:
    batch = link.batch
    secret, hashed = identity.new_secret()
    with transaction.atomic():
        # a pseudonym: the platform id stays in this table, which only admins read
        annotator = create_annotator(f"study{link.pk}-{secrets.token_hex(5)}", languages={batch.language: None})
        BatchAssignee.objects.create(batch=batch, annotator=annotator, override_reason="")
        stage = Participant.Stage.CONSENT if link.consent.strip() else Participant.Stage.INSTRUCTIONS
        tab = secrets.token_urlsafe(16)
        return Admission(Participant.objects.create(
            link=link, annotator=annotator, platform_id=arrival.platform_id, platform_study_id=arrival.study_id,
            platform_session_id=arrival.session_id, stage=stage, started_at=now, batch=batch,
            deadline=now + timedelta(minutes=link.minutes), browser_secret_hash=hashed, tab=tab, tab_seen_at=now),
            secret, tab)


def _has_room(batch: Batch) -> bool:
    """Whether an item of the batch still takes an answer (the batch hands out items, and the engine's cached
    count of included human answers is below k; one index probe). An item someone else holds may still take the
    last room: the work step then says the study is full."""
    return batch.hands_out and BatchItem.objects.filter(batch_id=batch.pk, human_answers__lt=batch.overlap).exists()


def follow_batch(link: StudyLink, batch: Batch) -> None:
    """Point the link at `batch` (of the link's task): new arrivals are assigned to it, and a running participant
    moves to it once their own batch has nothing left for them (`move_on`). A campaign's link follows its batches
    this way (agreement/campaigns/campaign_batches.py)."""
    StudyLink.objects.filter(pk=link.pk).update(batch=batch)
    link.batch = batch


def move_on(participant: Participant) -> bool:
    """The participant's batch has nothing left for them: when the link points at another batch, move them there
    (assigned to it; `Participant.batch`), first asking the link's owner to move it if it still points at theirs
    (`study_link_ran_dry`: a collecting campaign points it at a batch with an item for them, drawing one if none).
    Returns whether they moved; their answers so far stay where they are, and their quota counts every batch
    (`n_work`)."""
    link = participant.link
    current = StudyLink.objects.filter(pk=link.pk).values_list("batch_id", flat=True).first()
    if current == link.batch_id:
        study_link_ran_dry.send(sender=StudyLink, link_id=link.pk, batch_id=link.batch_id,
                                annotator_id=participant.annotator_id)
        # the owner may have moved the link, or lowered the answers that earn the code (a campaign that ended)
        current, link.min_answers = StudyLink.objects.filter(pk=link.pk).values_list("batch_id", "min_answers").get()
    if current == link.batch_id:
        return False
    batch = Batch.objects.select_related("task").get(pk=current)
    BatchAssignee.objects.get_or_create(batch=batch, annotator=participant.annotator,
                                        defaults={"override_reason": ""})
    Participant.objects.filter(pk=participant.pk).update(batch=batch)
    participant.batch = batch
    link.batch = batch
    return True


def end(participant: Participant, stage: str, *, reason: str = "", now: datetime | None = None) -> None:
    """Finish a participant's run (completed or returned with `reason`); their held items go back to the
    pool at once and the engine takes no new answers from them. Answers already given stay. A returned
    participant is deactivated; a completed one stays active until their deadline, only so that they may revise
    their answers from the completion page (annotation/crowd/item_actions.py), then `expire_overdue` deactivates
    them."""
    with transaction.atomic():
        changed = Participant.objects.filter(pk=participant.pk, stage__in=RUNNING).update(
            stage=stage, returned_reason=reason, finished_at=now or timezone.now(), check_item=None, check_role="")
        if changed and stage == Participant.Stage.COMPLETED:
            release_holds(participant.annotator)
        elif changed:
            set_active(participant.annotator, False)
    participant.refresh_from_db()


def expire_overdue(*, now: datetime | None = None) -> int:
    """Mark every running participant past their deadline returned (timed out), and deactivate the completed
    ones past it (their time to revise is over); returns how many were returned."""
    now = now or timezone.now()
    overdue = []  # an arrival sweeps: two prepared statements when, as almost always, nobody is overdue
    if held.overdue_exists(RUNNING, now):
        overdue = list(Participant.objects.filter(stage__in=RUNNING, deadline__lt=now).select_related("annotator"))
    for participant in overdue:
        end(participant, Participant.Stage.RETURNED, reason="timed_out", now=now)
    held.deactivate_overdue_completed(now)
    return len(overdue)


# --- one tab --------------------------------------------------------------------------------------------------------

def open_tab(participant: Participant, *, take_over: bool = False, now: datetime | None = None) -> str | None:
    """A new tab token for this participant, or None while another tab was active in the last TAB_IDLE_SECONDS
    (unless `take_over`). One conditional UPDATE decides, so two tabs opening at once get one token."""
    now = now or timezone.now()
    token = secrets.token_urlsafe(16)
    free = Q(tab="") | Q(tab_seen_at__isnull=True) | Q(tab_seen_at__lt=now - timedelta(seconds=TAB_IDLE_SECONDS))
    rows = Participant.objects.filter(pk=participant.pk)
    if not take_over:
        rows = rows.filter(free)
    if not rows.update(tab=token, tab_seen_at=now):
        return None
    participant.tab, participant.tab_seen_at = token, now
    return token


def holds_tab(participant: Participant, tab: str, *, now: datetime | None = None) -> bool:
    """Whether `tab` is the participant's one live tab (and note that it was seen now, unless it was noted
    less than TAB_SEEN_REFRESH_SECONDS ago: the participant row was just read, so no write is needed)."""
    if not tab or tab != participant.tab:
        return False
    now = now or timezone.now()
    seen = participant.tab_seen_at
    if seen is not None and now - seen < timedelta(seconds=TAB_SEEN_REFRESH_SECONDS):
        return True
    return bool(Participant.objects.filter(pk=participant.pk, tab=tab).update(tab_seen_at=now))


# --- what comes next --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """What the participant's page shows now: a stage page, or an item with its role (work, attention, gold,
    practice). The role of a check item is never shown to the participant."""

    page: str
    item: Item | None = None
    role: str = ""
    n_work: int | None = None  # work items answered, where the step counted them (None: not counted)


def n_work(participant: Participant) -> int:
    """The work items the participant answered: the quota counts these (a skipped item does not), in every batch
    they worked in (the annotator exists for this study alone; a campaign's link moves them from batch to batch)."""
    return Annotation.objects.filter(annotator_id=participant.annotator_id, skipped=False).count()


def check_item_ids(link: StudyLink, role: str) -> list[int]:
    """The ids of the task's check items of `role` (practice or attention), in order: the same for every
    participant of the study, so one query per process and CHECK_IDS_SECONDS (keyed by the link's token)."""
    key = f"crowd-check-ids:{link.token}"
    ids = cache.get(key)
    if ids is None:
        rows = (Item.objects.filter(task_id=link.batch.task_id, item_check__isnull=False)
                .order_by("position", "pk").values_list("pk", "item_check__role"))
        ids = {wanted: [pk for pk, got in rows if got == wanted]
               for wanted in (ItemCheck.Role.PRACTICE, ItemCheck.Role.ATTENTION)}
        cache.set(key, ids, timeout=CHECK_IDS_SECONDS)
    return ids[role]


def n_gold_items(link: StudyLink) -> int:
    """How many items hidden gold checks are drawn from (the task's, set at import): cached as the check ids are."""
    key = f"crowd-gold-count:{link.token}"
    count = cache.get(key)
    if count is None:
        count = gold_items(link.batch).count() if link.gold_rate > 0 else 0
        cache.set(key, count, timeout=CHECK_IDS_SECONDS)
    return count


def item_counter(participant: Participant, n_answered: int) -> tuple[int, int]:
    """(this item's number, the items of the whole run) for "Item 3 of 7": the quota's work items and the run's
    check items (attention and hidden gold) counted alike, so a check shows the next number, as a work item would,
    and does not repeat the number of the item before it (issue 35, item 7). One query: the checks answered."""
    link = participant.link
    n_attention = len(check_item_ids(link, CheckResult.Role.ATTENTION))
    total = link.quota + checks.n_checks_planned(link.quota, n_attention, link.gold_rate, n_gold_items(link))
    n_checks = CheckResult.objects.filter(
        participant=participant, role__in=(CheckResult.Role.ATTENTION, CheckResult.Role.GOLD)).count()
    return min(n_answered + n_checks + 1, total), total


def _item(pk: int) -> Item:
    return Item.objects.select_related("task").get(pk=pk)


def practice_items(link: StudyLink) -> list[Item]:
    return list(Item.objects.filter(task_id=link.batch.task_id, item_check__role=ItemCheck.Role.PRACTICE)
                .order_by("position", "pk"))


def attention_items(link: StudyLink) -> list[Item]:
    return list(Item.objects.filter(task_id=link.batch.task_id, item_check__role=ItemCheck.Role.ATTENTION)
                .order_by("position", "pk"))


def current_step(participant: Participant, *, now: datetime | None = None) -> Step:
    """The page for the participant's stage; in the work stage the item on screen, a due check, or the next
    work item from the engine (the item they hold first). Ends the run when the time or the work is up."""
    now = now or timezone.now()
    if participant.stage in RUNNING and participant.deadline < now:
        end(participant, Participant.Stage.RETURNED, reason="timed_out", now=now)
    stage = participant.stage
    if stage in (Participant.Stage.CONSENT, Participant.Stage.INSTRUCTIONS):
        return Step(stage)
    if stage == Participant.Stage.PRACTICE:
        ids = check_item_ids(participant.link, CheckResult.Role.PRACTICE)
        if participant.practice_done < len(ids):
            return Step("item", _item(ids[participant.practice_done]), CheckResult.Role.PRACTICE)
        Participant.objects.filter(pk=participant.pk).update(stage=Participant.Stage.WORK)
        participant.stage = Participant.Stage.WORK
    if participant.stage == Participant.Stage.WORK:
        return _work_step(participant, now)
    return Step(participant.stage)


def answered_work_step(participant: Participant, item_id: Any, *, now: datetime | None = None) -> Step | None:
    """The step an answer to `item_id` answers, read in one query when it is the common case: a running
    participant in the work stage, no check item on screen, within their time, holding a live hold on that work
    item of the study's batch (the engine handed it to them as their current item, below the quota). None
    otherwise: `current_step` then decides, as for a page."""
    now = now or timezone.now()
    if (participant.stage != Participant.Stage.WORK or participant.check_item_id is not None
            or participant.deadline < now or not str(item_id or "").isdigit()):
        return None
    item = (Item.objects.filter(pk=int(item_id), batch_items__batch_id=participant.link.batch_id,
                                batch_items__holds__annotator_id=participant.annotator_id,
                                batch_items__holds__expires_at__gt=now).first())
    if item is None:
        return None
    item.task = participant.link.batch.task
    return Step("item", item, "work")


def _work_step(participant: Participant, now: datetime) -> Step:
    link = participant.link
    done = n_work(participant)
    if participant.check_item_id is not None:
        return Step("item", participant.check_item, participant.check_role, done)
    if done >= link.quota:
        end(participant, Participant.Stage.COMPLETED, now=now)
        return Step(Participant.Stage.COMPLETED)
    attention = check_item_ids(link, CheckResult.Role.ATTENTION)
    if attention or link.gold_rate > 0:  # a study without checks never asks whether one is due
        holds = Hold.objects.filter(annotator_id=participant.annotator_id, expires_at__gt=now).exists()
        check = None if holds else _due_check(participant, done, attention)
        if check is not None:
            item, role = check
            Participant.objects.filter(pk=participant.pk).update(check_item=item, check_role=role)
            participant.check_item, participant.check_role = item, role
            return Step("item", item, role, done)
    item = next_item(participant.annotator, link.batch, now=now)
    if item is None and move_on(participant):  # the link moved on to a next batch: they follow it
        item = next_item(participant.annotator, link.batch, now=now)
    if item is None:  # nothing left for them in the batch: the code when they answered enough, else return
        stage, reason = _out_of_items(participant, done)
        end(participant, stage, reason=reason, now=now)
        return Step(participant.stage)
    return Step("item", item, "work", done)


def _out_of_items(participant: Participant, done: int) -> tuple[str, str]:
    """The stage and reason of a run whose batch has no item left for the participant after `done` answers:
    completed when they answered the link's minimum (StudyLink.answers_for_code); otherwise returned, "full"
    when they skipped nothing (others took every item), "too_few_answers" when they skipped their way out.
    No completion code is ever given for fewer answers (docs/crowd.md, "No code without the work")."""
    if done >= participant.link.answers_for_code:
        return Participant.Stage.COMPLETED, ""
    skipped = Annotation.objects.filter(annotator_id=participant.annotator_id, skipped=True).exists()
    return Participant.Stage.RETURNED, "too_few_answers" if skipped else "full"


def _due_check(participant: Participant, done: int, attention: list[int]) -> tuple[Item, str] | None:
    """The check item due after `done` work answers, if any, and its role; one query for the participant's
    checks so far (and, when a gold check is due, the pool to draw it from)."""
    link = participant.link
    done_checks = list(CheckResult.objects.filter(
        participant=participant, role__in=(CheckResult.Role.ATTENTION, CheckResult.Role.GOLD))
        .values_list("role", "item_id"))
    seen = {item_id for role, item_id in done_checks if role == CheckResult.Role.ATTENTION}
    if checks.attention_due(done, len(seen), len(attention), link.quota):
        return _item(next(pk for pk in attention if pk not in seen)), CheckResult.Role.ATTENTION
    used = [item_id for role, item_id in done_checks if role == CheckResult.Role.GOLD]
    if checks.gold_due(done, len(used), link.gold_rate):
        answered = Annotation.objects.filter(annotator_id=participant.annotator_id).values_list("item_id", flat=True)
        pool = list(gold_items(link.batch).exclude(pk__in=used).exclude(pk__in=answered)
                    .order_by("pk").values_list("pk", flat=True))
        if pool:  # seeded by participant and count, so a reload draws the same item
            chosen = random.Random(f"{participant.pk}:{len(used)}").choice(pool)
            return _item(chosen), CheckResult.Role.GOLD
    return None


# --- answers --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Feedback:
    """What a practice item's answer shows: whether it was right, and the expected answer with its note."""

    passed: bool
    expected: Any
    note: str
    asked_to_return: bool


def submit_work(participant: Participant, item: Item, value: Any, *, time_spent_ms: int | None,
                started_at: datetime | None, flag_comment: str = "", now: datetime | None = None) -> SubmitResult:
    """The engine stores the answer (validation, overlap k, idempotent replay; flagged when `flag_comment`); then
    the speed and straight-lining checks look at it. Raises ValidationProblem or AssignmentRefused as the engine
    does."""
    result = submit_answer(participant.annotator, participant.link.batch, item, value, time_spent_ms=time_spent_ms,
                           started_at=started_at, flagged=bool(flag_comment), flag_comment=flag_comment,
                           source="crowd", now=now)
    link = participant.link
    if result.created and link.min_seconds and result.annotation.time_spent_ms is not None \
            and result.annotation.time_spent_ms < link.min_seconds * 1000:
        _record(participant, item, CheckResult.Role.SPEED, value, passed=False,
                time_spent_ms=result.annotation.time_spent_ms)
    if result.created and link.straightline_run:
        _check_straightlining(participant, item, link.straightline_run)
    return result


def _check_straightlining(participant: Participant, item: Item, run: int) -> None:
    latest = list(Annotation.objects.filter(annotator_id=participant.annotator_id, batch_id=participant.link.batch_id,
                                            skipped=False).order_by("-pk").values_list("item_id", "value")[:run])
    if len(latest) < run or checks.straightline_run([value for _, value in latest]) < run:
        return
    flagged = CheckResult.objects.filter(participant=participant, role=CheckResult.Role.STRAIGHTLINE,
                                         item_id__in=[item_id for item_id, _ in latest]).exists()
    if not flagged:  # one flag per run of `run` answers
        _record(participant, item, CheckResult.Role.STRAIGHTLINE, latest[0][1], passed=False)


def _record(participant: Participant, item: Item, role: str, value: Any, *, passed: bool,
            time_spent_ms: int | None = None, note: str = "") -> CheckResult:
    result, _ = CheckResult.objects.get_or_create(
        participant=participant, item=item, role=role,
        defaults={"value": value, "passed": passed, "time_spent_ms": time_spent_ms, "note": note[:2100]})
    return result


def _expected(item: Item, role: str) -> tuple[Any, str]:
    if role == CheckResult.Role.GOLD:
        return ItemGold.objects.get(item=item).value, ""
    check = ItemCheck.objects.get(item=item)
    return check.expected, check.feedback


def submit_check(participant: Participant, item: Item, value: Any, *, time_spent_ms: int | None,
                 flag_comment: str = "") -> bool:
    """A hidden check's answer (attention or gold): validated as an answer, compared, recorded once (with the
    participant's flag comment, if any, in `note`); the next step goes on to work. Returns whether it passed
    (the participant is never told)."""
    role = participant.check_role
    clean = item.task.validate_answer(value, item.payload)
    expected, _ = _expected(item, role)
    passed = checks.answer_matches(item.task.kind, clean, expected, tolerance=checks.scale_tolerance(item.task.scale))
    with transaction.atomic():
        result = _record(participant, item, role, clean, passed=passed, time_spent_ms=time_spent_ms,
                         note=f"flagged: {flag_comment}" if flag_comment else "")
        Participant.objects.filter(pk=participant.pk, check_item=item).update(check_item=None, check_role="")
    participant.check_item, participant.check_role = None, ""
    return result.passed


def submit_practice(participant: Participant, item: Item, value: Any, *, now: datetime | None = None) -> Feedback:
    """A practice answer: recorded once, the participant sees whether it matched and the expected answer. One
    failure more than the link allows ends the run, asking the participant to return (comprehension)."""
    clean = item.task.validate_answer(value, item.payload)
    expected, note = _expected(item, CheckResult.Role.PRACTICE)
    passed = checks.answer_matches(item.task.kind, clean, expected, tolerance=checks.scale_tolerance(item.task.scale))
    with transaction.atomic():
        created = not CheckResult.objects.filter(participant=participant, item=item,
                                                 role=CheckResult.Role.PRACTICE).exists()
        result = _record(participant, item, CheckResult.Role.PRACTICE, clean, passed=passed)
        if created:
            participant.practice_done += 1
            participant.practice_failed += not result.passed
            participant.save(update_fields=["practice_done", "practice_failed"])
    asked = participant.practice_failed > participant.link.practice_failures_allowed
    if asked:
        end(participant, Participant.Stage.RETURNED, reason="comprehension", now=now)
    return Feedback(result.passed, expected, note, asked)


def advance(participant: Participant) -> None:
    """One step on from consent (to instructions) or instructions (to practice, or to work when the task has
    no practice items); a conditional UPDATE, so a repeated click changes nothing."""
    following = {Participant.Stage.CONSENT: Participant.Stage.INSTRUCTIONS,
                 Participant.Stage.INSTRUCTIONS: (
                     Participant.Stage.PRACTICE if check_item_ids(participant.link, CheckResult.Role.PRACTICE)
                     else Participant.Stage.WORK)}
    stage = following.get(participant.stage)
    if stage is not None and Participant.objects.filter(pk=participant.pk, stage=participant.stage).update(stage=stage):
        participant.stage = stage
