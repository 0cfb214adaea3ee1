"""A participant's Skip, Flag and going back to revise, as the ordinary loop has them (annotation/core/views.py).

Kept apart from studies.py (the run's stages and steps) because these act on one item the participant chose,
not on the run's next step. Work items go through the assignment engine as the loop's do: a skip is stored as a
skipped answer (the item leaves this participant's queue for good and its slot goes back to the pool for
others), a flag without an answer is a flagged skip, and a revision is a second submit on one's own answer
(the engine keeps every earlier value in AnnotationRevision; reports read the latest).

Check items (attention, hidden gold) look like work items, so they offer Skip and Flag too, or the participant
could tell them apart; a skipped or flagged check is recorded as *unanswered*: not passed (an instructed-response
item asks for an answer) and not failed either, since Prolific lets only failed fair checks count toward a
rejection (docs/crowd.md, "Checks and Prolific's rules"); the reason stays in `CheckResult.note` for the
researcher. Check answers are not revised: going back walks over the participant's work answers only.

A participant who finished the quota may still revise their work answers from the completion page until their
time limit ends (`revisable`, `revise`): the last answer of the quota would otherwise be the one answer that could
never be corrected.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.core.assignment import SubmitResult, flag_item, skip_item, submit_answer
from annotation.core.models import Annotation
from annotation.crowd.models import CheckResult, Participant
from annotation.crowd.studies import Step, StudyProblem, end


def skip_step(participant: Participant, step: Step, *, reason: str, time_spent_ms: int | None = None) -> None:
    """Skip the item on screen (`step`): a work item through the engine, a check item recorded as not passed."""
    if step.role == "work":
        skip_item(participant.annotator, participant.link.batch, step.item, reason=reason,
                  time_spent_ms=time_spent_ms, source="crowd")
    else:
        _leave_check(participant, step, note=f"skipped: {reason}")


def flag_step(participant: Participant, step: Step, *, comment: str) -> None:
    """Flag the item on screen without answering it: a flagged skip (the engine's flag_item), or, on a check
    item, the check recorded as not passed with the comment."""
    if step.role == "work":
        flag_item(participant.annotator, participant.link.batch, step.item, comment=comment, source="crowd")
    else:
        _leave_check(participant, step, note=f"flagged: {comment}")


def _leave_check(participant: Participant, step: Step, *, note: str) -> None:
    with transaction.atomic():
        CheckResult.objects.get_or_create(participant=participant, item=step.item, role=step.role,
                                          defaults={"value": None, "passed": False, "unanswered": True,
                                                    "note": note[:2100]})
        Participant.objects.filter(pk=participant.pk, check_item=step.item).update(check_item=None, check_role="")
    participant.check_item, participant.check_role = None, ""


def previous_answer(participant: Participant, *, before: int | None = None) -> Annotation | None:
    """The participant's work answer given just before their answer to item `before` (or their latest), for
    going back (its id and item id only: the pages link to it); skipped items never come back. First-answer
    order (ids), so a revision does not reorder."""
    answers = Annotation.objects.filter(annotator_id=participant.annotator_id, batch_id=participant.link.batch_id,
                                        skipped=False)
    if before is not None:
        anchor = answers.filter(item_id=before).values_list("pk", flat=True).first()
        if anchor is None:
            return None
        answers = answers.filter(pk__lt=anchor)
    return answers.only("pk", "item_id").order_by("-pk").first()  # the pages link to its item by id


def may_revise(participant: Participant, *, now: datetime | None = None) -> bool:
    """Whether the participant may revise answers now: while they work, or after the last answer of the quota
    until their deadline (from the completion page; they have the code already), while the study is open, and
    never once they were excluded (the engine takes nothing more from them; an exclusion undone leaves a completed
    participant's annotator inactive, so the way back stays closed then too)."""
    annotator = participant.annotator
    if annotator.excluded_at is not None or not annotator.active:
        return False
    if participant.stage == Participant.Stage.WORK:
        return True
    return (participant.stage == Participant.Stage.COMPLETED and participant.link.is_open
            and participant.deadline >= (now or timezone.now()))


def revisable(participant: Participant, item_id: str | int | None) -> Annotation | None:
    """The participant's own (not skipped) work answer to `item_id` in the study's batch while they may revise
    (`may_revise`), or None (a malformed id, another item, a skip, a participant past that time)."""
    if not may_revise(participant) or not str(item_id or "").isdigit():
        return None
    return (Annotation.objects.select_related("item").filter(
        annotator_id=participant.annotator_id, batch_id=participant.link.batch_id, item_id=int(item_id),
        skipped=False).first())


def revise(participant: Participant, answer: Annotation, value: object, *,
           now: datetime | None = None) -> SubmitResult:
    """Replace the participant's answer with `value` while the study is open and their time runs: the engine
    keeps the earlier value in AnnotationRevision. Past the deadline the participant is returned (timed out) and
    StudyProblem(status 410) says so; the engine refuses a closed batch (AssignmentRefused)."""
    now = now or timezone.now()
    if participant.deadline < now:
        end(participant, Participant.Stage.RETURNED, reason="timed_out", now=now)  # a completed run stays completed
        raise StudyProblem("time", "Your time for this study ran out; the answer was not changed.", status=410)
    return submit_answer(participant.annotator, participant.link.batch, answer.item, value, source="crowd", now=now)
