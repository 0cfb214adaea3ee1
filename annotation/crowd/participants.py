"""The researcher's view of a study's participants: checks passed and failed, time, agreement with the
consensus, the suggested decision (annotation/crowd/checks.py, `suggestion`), exclusion, and the CSV lists of
platform ids to approve, reject and bonus.

Platform ids are personal data: the page shows them and the CSVs export them to admins only (the views check);
everyone else sees the participant's pseudonym (the annotator name).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.core.assignment import recount_after_inclusion, reopen_after_exclusion, set_active
from annotation.core.models import Annotation, Annotator
from annotation.core.signals import annotations_imported
from annotation.crowd import checks, studies
from annotation.crowd.models import CheckResult, ExclusionEvent, Participant, StudyLink
from hume.lib.csv_safety import to_csv
from measures import annotator_models

ROLES = [role for role, _ in CheckResult.Role.choices]


@dataclass
class ParticipantRow:
    participant: Participant
    n_work: int = 0  # answered work items (what the quota counts)
    n_skipped: int = 0  # skipped work items (flagged ones among them: a flag without an answer is a skip)
    n_flagged: int = 0  # work answers and skips flagged, and check items skipped or flagged
    passed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    failed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    # check items skipped or flagged without an answer: neither passed nor failed (Prolific's fair-check rule)
    unanswered: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    spread: dict[str, Any] | None = None  # this participant's row of measures.annotator_models.answer_spread
    agreement: float | None = None
    n_compared: int = 0

    @property
    def minutes(self) -> float:
        end = self.participant.finished_at or timezone.now()
        return round((end - self.participant.started_at).total_seconds() / 60, 1)

    @property
    def fair_failures(self) -> int:
        """Failed fair checks: instructed-response attention checks answered wrongly (annotation/crowd/checks.py);
        a check skipped or flagged without an answer is not a failure."""
        return self.failed[CheckResult.Role.ATTENTION]

    @property
    def suggestion(self) -> str:
        p = self.participant
        return checks.suggestion(stage=p.stage, returned_reason=p.returned_reason, fair_failures=self.fair_failures,
                                 enough_work=self.n_work >= p.link.answers_for_code)

    @property
    def excluded(self) -> bool:
        return self.participant.annotator.excluded_at is not None

    def checks(self) -> list[dict[str, Any]]:
        return [{"role": role, "label": label, "passed": self.passed[role], "failed": self.failed[role],
                 "unanswered": self.unanswered[role]} for role, label in CheckResult.Role.choices]


def participant_rows(link: StudyLink) -> list[ParticipantRow]:
    """One row per participant of the study, with their checks, agreement with the consensus and answer spread,
    from three bulk queries (participants, check results, the batch's human answers)."""
    people = list(Participant.objects.filter(link=link).select_related("annotator__user").order_by("started_at"))
    for person in people:  # the link is the one given (its rule for the code), not read again per participant
        person.link = link
    rows = {p.annotator_id: ParticipantRow(p) for p in people}
    by_participant = {p.pk: rows[p.annotator_id] for p in people}
    for participant_id, role, passed, unanswered, note in CheckResult.objects.filter(participant__link=link) \
            .values_list("participant_id", "role", "passed", "unanswered", "note"):
        row = by_participant[participant_id]
        counts = row.passed if passed else row.unanswered if unanswered else row.failed
        counts[role] += 1
        row.n_flagged += bool(note)
    answers = (Annotation.objects.filter(batch_id=link.batch_id, annotator__agent=Annotator.Agent.HUMAN)
               .values_list("item_id", "annotator_id", "value", "skipped", "annotator__excluded_at", "flagged"))
    by_item: dict[int, list[tuple[int, Any]]] = defaultdict(list)
    for item_id, annotator_id, value, skipped, excluded_at, flagged in answers:
        if annotator_id in rows:
            row = rows[annotator_id]
            row.n_work += not skipped
            row.n_skipped += skipped
            row.n_flagged += flagged
        if not skipped and (excluded_at is None or annotator_id in rows):
            by_item[item_id].append((annotator_id, value))
    _agreement(link, rows, by_item)
    _spread(rows, by_item)
    return list(rows.values())


def _spread(rows: dict[int, ParticipantRow], by_item: dict[int, list[tuple[int, Any]]]) -> None:
    """Each participant's answer spread (modal share, entropy, straight-lining over their whole run), as the
    quality page has it from the report (measures/annotator_models.py, `answer_spread`); answers compared as
    canonical JSON (a text label as itself), so it applies to every kind. `pool_share` is among participants."""
    triples = [(item_id, str(annotator_id), value if isinstance(value, str) else checks.canonical(value))
               for item_id, answers in by_item.items() for annotator_id, value in answers if annotator_id in rows]
    for entry in annotator_models.answer_spread(triples)["annotators"]:
        rows[int(entry["name"])].spread = entry


def _agreement(link: StudyLink, rows: dict[int, ParticipantRow], by_item: dict[int, list[tuple[int, Any]]]) -> None:
    task = link.batch.task
    tolerance = checks.scale_tolerance(task.scale)

    def match(a: Any, b: Any) -> bool:
        return checks.answer_matches(task.kind, a, b, tolerance=tolerance)

    def excluded(annotator_id: int) -> bool:  # an excluded annotator is no part of anyone's consensus
        row = rows.get(annotator_id)
        return row is not None and row.excluded

    own: dict[int, dict[int, Any]] = defaultdict(dict)
    for item_id, answers in by_item.items():
        for annotator_id, value in answers:
            if annotator_id in rows:
                own[annotator_id][item_id] = value
    for annotator_id, values in own.items():
        others = {item: [v for a, v in by_item[item] if a != annotator_id and not excluded(a)] for item in values}
        rows[annotator_id].agreement, rows[annotator_id].n_compared = checks.consensus_agreement(values, others, match)


def flags(link: StudyLink) -> list[dict[str, str]]:
    """What the participants flagged, or skipped with a reason, for the researcher: work items (the answer's flag
    comment, or the skip reason) and check items (CheckResult.note). Pseudonyms only, by participant and item; an
    item by its own id (the dataset's `id`, Item.external_id), never the 64-hex digest `uid` no one can look up."""
    work = (Annotation.objects.filter(batch_id=link.batch_id, annotator__participant__link=link)
            .filter(Q(flagged=True) | Q(skipped=True)).order_by("annotator__user__username", "pk")
            .values_list("annotator__user__username", "item__external_id", "flagged", "flag_comment", "skipped",
                         "skip_reason"))
    rows = [{"annotator": name, "item": uid,
             "what": ("flagged, skipped" if skipped else "flagged, answered") if flagged else "skipped",
             "text": comment if flagged else reason}
            for name, uid, flagged, comment, skipped, reason in work]
    checked = (CheckResult.objects.filter(participant__link=link).exclude(note="")
               .order_by("participant__annotator__user__username", "pk")
               .values_list("participant__annotator__user__username", "item__external_id", "role", "note"))
    rows += [{"annotator": name, "item": uid, "what": f"{role} check", "text": note}
             for name, uid, role, note in checked]
    return rows


# --- exclusion ---------------------------------------------------------------------------------------------------

def exclude_annotator(annotator: Annotator, reason: str, *, by: Any = None, now: datetime | None = None) -> list[int]:
    """Leave the annotator's answers out of every report from now on, with `reason` (listed by the reports), and
    queue the reports of the tasks they answered. Their answers stay stored but no longer fill overlap slots: the
    items they answered go back to the pool until k included answers are in (assignment.reopen_after_exclusion),
    and the annotator is deactivated (a participant still running is returned, reason "excluded"). The history
    keeps who (`by`, None = the command line), when and why (ExclusionEvent). Returns those task ids."""
    reason = _reason(reason, "an exclusion needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if locked.excluded_at is not None:
            raise ValueError(f"{annotator.name} is already excluded")
        ExclusionEvent.objects.create(annotator=locked, action=ExclusionEvent.Action.EXCLUDE, reason=reason, by=by,
                                      at=now, was_active=locked.active)
        Annotator.objects.filter(pk=annotator.pk).update(excluded_at=now, excluded_reason=reason)
        _return_if_running(annotator, now)
        reopen_after_exclusion(annotator)
        task_ids = _queue_reports(annotator)
    annotator.refresh_from_db()
    return task_ids


@dataclass(frozen=True)
class Inclusion:
    task_ids: list[int]  # the tasks whose reports were queued again
    n_items_over_k: int  # the annotator's items that now hold more than k included answers (all kept)


def include_annotator(annotator: Annotator, reason: str, *, by: Any = None, now: datetime | None = None) -> Inclusion:
    """Undo an exclusion: the annotator's answers count again, in the reports (queued again; their exclusion
    leaves the list) and toward overlap k (assignment.recount_after_inclusion). Items that reached k with other
    annotators meanwhile keep every answer and are counted in `n_items_over_k`. An annotator who was active
    before the exclusion is active again, except a study participant, whose run stays ended. ValueError when
    the annotator is not excluded or `reason` is empty; nothing changes then."""
    reason = _reason(reason, "an undo needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if locked.excluded_at is None:
            raise ValueError(f"{annotator.name} is not excluded")
        excluded = locked.exclusion_events.filter(action=ExclusionEvent.Action.EXCLUDE).order_by("-at", "-pk").first()
        Annotator.objects.filter(pk=annotator.pk).update(excluded_at=None, excluded_reason="")
        if excluded is not None and excluded.was_active and not Participant.objects.filter(annotator=locked).exists():
            set_active(locked, True)
        n_over = recount_after_inclusion(locked)
        ExclusionEvent.objects.create(annotator=locked, action=ExclusionEvent.Action.INCLUDE, reason=reason, by=by,
                                      at=now, n_items_over_k=n_over)
        task_ids = _queue_reports(annotator)
    annotator.refresh_from_db()
    return Inclusion(task_ids, n_over)


def inclusion_summary(n_items_over_k: int) -> str:
    """What a re-inclusion did to overlap k, in words (the page's message and the command's output)."""
    if not n_items_over_k:
        return "No item is above k."
    one = n_items_over_k == 1
    return (f"{n_items_over_k} item{'' if one else 's'} now hold{'s' if one else ''} more than k included answers "
            "(others answered them meanwhile); every answer is kept.")


def _reason(reason: str, missing: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError(missing)
    return reason[:500]


def _queue_reports(annotator: Annotator) -> list[int]:
    """Queue the reports of every task the annotator answered (the agreement app recomputes them after commit)."""
    task_ids = sorted(set(Annotation.objects.filter(annotator=annotator).values_list("item__task_id", flat=True)))
    for task_id in task_ids:
        annotations_imported.send(sender=Annotation, task_id=task_id)
    return task_ids


def exclusion_history(link: StudyLink) -> list[ExclusionEvent]:
    """Every exclusion and undo of the study's participants, newest first, with who and why."""
    return list(ExclusionEvent.objects.filter(annotator__participant__link=link)
                .select_related("annotator__user", "by").order_by("-at", "-pk"))


def _return_if_running(annotator: Annotator, now: datetime) -> None:
    participant = Participant.objects.filter(annotator=annotator, stage__in=studies.RUNNING).first()
    if participant is not None:
        studies.end(participant, Participant.Stage.RETURNED, reason="excluded", now=now)


# --- exports -------------------------------------------------------------------------------------------------------

EXPORTS = ("approve", "reject", "bonus", "participants")
PARTICIPANT_COLUMNS = [
    "participant_id", "annotator", "stage", "returned_reason", "n_work", "n_skipped", "n_flagged", "minutes",
    "attention_passed", "attention_failed", "attention_unanswered", "gold_passed", "gold_failed", "gold_unanswered",
    "practice_passed", "practice_failed", "speed_flags", "straightline_flags", "agreement", "n_compared",
    "n_answers", "modal_label", "modal_share", "entropy_bits", "straightlining", "suggestion", "excluded",
    "excluded_reason"]


def decision_csv(link: StudyLink, which: str, *, bonus: str = "") -> str:
    """Platform ids to approve (completed, no rejection suggested, not excluded), to reject (at least two failed
    fair checks) or to bonus (the approved, with `bonus` as the amount: Prolific's "id,amount" bulk format); or
    `participants`, the whole participants table (PARTICIPANT_COLUMNS, docs/crowd.md)."""
    rows = participant_rows(link)
    if which == "participants":
        return to_csv(PARTICIPANT_COLUMNS, [participant_line(row) for row in rows])
    if which == "reject":
        chosen = [r for r in rows if r.suggestion == "reject"]
        return to_csv(["participant_id", "failed_attention_checks"],
                      [[r.participant.platform_id, r.fair_failures] for r in chosen])
    approved = [r for r in rows if r.suggestion == "approve" and not r.excluded]
    if which == "approve":
        return to_csv(["participant_id"], [[r.participant.platform_id] for r in approved])
    amount = bonus_amount(bonus)
    return to_csv(["participant_id", "amount"], [[r.participant.platform_id, amount] for r in approved])


def participant_line(row: ParticipantRow) -> list[Any]:
    """One participant as PARTICIPANT_COLUMNS: the page's columns, unanswered checks apart from failed ones, and
    the answer spread (empty when they answered nothing)."""
    p, spread = row.participant, row.spread or {}
    share, entropy = spread.get("modal_share"), spread.get("entropy_bits")
    return [
        p.platform_id, p.annotator.name, p.stage, p.returned_reason, row.n_work, row.n_skipped, row.n_flagged,
        row.minutes, row.passed["attention"], row.failed["attention"], row.unanswered["attention"],
        row.passed["gold"], row.failed["gold"], row.unanswered["gold"], row.passed["practice"],
        row.failed["practice"], row.failed["speed"], row.failed["straightline"],
        "" if row.agreement is None else round(row.agreement, 4), row.n_compared, spread.get("n_answers", 0),
        spread.get("modal_label", ""), "" if share is None else round(share, 4),
        "" if entropy is None else round(entropy, 4), spread.get("straightlining", ""), row.suggestion,
        row.excluded, p.annotator.excluded_reason]


def bonus_amount(text: str) -> str:
    """The bonus per participant, a positive amount with at most two decimals ("0.50"); ValueError otherwise."""
    try:
        amount = Decimal(text)
    except (InvalidOperation, TypeError):
        raise ValueError(f"amount: must be a number such as 0.50, got {text!r}") from None
    if not amount.is_finite() or amount <= 0 or amount > 100 or amount != amount.quantize(Decimal("0.01")):
        raise ValueError(f"amount: must be more than 0 and at most 100, with at most two decimals, got {text!r}")
    return f"{amount:.2f}"
