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

from annotation.assignment import reopen_after_exclusion
from annotation.crowd import checks, studies
from annotation.crowd.models import CheckResult, Participant, StudyLink
from annotation.models import Annotation, Annotator
from annotation.signals import annotations_imported
from hume.lib.csv_safety import to_csv

ROLES = [role for role, _ in CheckResult.Role.choices]


@dataclass
class ParticipantRow:
    participant: Participant
    n_work: int = 0  # answered work items (what the quota counts)
    n_skipped: int = 0  # skipped work items (flagged ones among them: a flag without an answer is a skip)
    n_flagged: int = 0  # work answers and skips flagged, and check items skipped or flagged
    passed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    failed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    agreement: float | None = None
    n_compared: int = 0

    @property
    def minutes(self) -> float:
        end = self.participant.finished_at or timezone.now()
        return round((end - self.participant.started_at).total_seconds() / 60, 1)

    @property
    def fair_failures(self) -> int:
        """Failed fair checks: instructed-response attention checks (annotation/crowd/checks.py)."""
        return self.failed[CheckResult.Role.ATTENTION]

    @property
    def suggestion(self) -> str:
        p = self.participant
        return checks.suggestion(stage=p.stage, returned_reason=p.returned_reason, fair_failures=self.fair_failures)

    @property
    def excluded(self) -> bool:
        return self.participant.annotator.excluded_at is not None

    def checks(self) -> list[dict[str, Any]]:
        return [{"role": role, "label": label, "passed": self.passed[role], "failed": self.failed[role]}
                for role, label in CheckResult.Role.choices]


def participant_rows(link: StudyLink) -> list[ParticipantRow]:
    """One row per participant of the study, with their checks and agreement with the consensus, from four bulk
    queries (participants, check counts, the batch's human answers)."""
    people = list(Participant.objects.filter(link=link).select_related("annotator__user").order_by("started_at"))
    rows = {p.annotator_id: ParticipantRow(p) for p in people}
    by_participant = {p.pk: rows[p.annotator_id] for p in people}
    for participant_id, role, passed, note in CheckResult.objects.filter(participant__link=link).values_list(
            "participant_id", "role", "passed", "note"):
        counts = by_participant[participant_id].passed if passed else by_participant[participant_id].failed
        counts[role] += 1
        by_participant[participant_id].n_flagged += bool(note)
    answers = (Annotation.objects.filter(batch_id=link.batch_id, annotator__kind=Annotator.Kind.HUMAN)
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
    return list(rows.values())


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
    comment, or the skip reason) and check items (CheckResult.note). Pseudonyms only, by participant and item."""
    work = (Annotation.objects.filter(batch_id=link.batch_id, annotator__participant__link=link)
            .filter(Q(flagged=True) | Q(skipped=True)).order_by("annotator__user__username", "pk")
            .values_list("annotator__user__username", "item__uid", "flagged", "flag_comment", "skipped",
                         "skip_reason"))
    rows = [{"annotator": name, "item": uid,
             "what": ("flagged, skipped" if skipped else "flagged, answered") if flagged else "skipped",
             "text": comment if flagged else reason}
            for name, uid, flagged, comment, skipped, reason in work]
    checked = (CheckResult.objects.filter(participant__link=link).exclude(note="")
               .order_by("participant__annotator__user__username", "pk")
               .values_list("participant__annotator__user__username", "item__uid", "role", "note"))
    rows += [{"annotator": name, "item": uid, "what": f"{role} check", "text": note}
             for name, uid, role, note in checked]
    return rows


# --- exclusion ---------------------------------------------------------------------------------------------------

def exclude_annotator(annotator: Annotator, reason: str, *, now: datetime | None = None) -> list[int]:
    """Leave the annotator's answers out of every report from now on, with `reason` (listed by the reports), and
    queue the reports of the tasks they answered. Their answers stay stored but no longer fill overlap slots: the
    items they answered go back to the pool until k included answers are in (assignment.reopen_after_exclusion),
    and the annotator is deactivated (a participant still running is returned, reason "excluded"). Returns
    those task ids."""
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("an exclusion needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(excluded_at=now, excluded_reason=reason[:500])
        _return_if_running(annotator, now)
        reopen_after_exclusion(annotator)
        task_ids = sorted(set(Annotation.objects.filter(annotator=annotator).values_list("item__task_id", flat=True)))
        for task_id in task_ids:  # the agreement app recomputes these tasks' reports after commit
            annotations_imported.send(sender=Annotation, task_id=task_id)
    annotator.refresh_from_db()
    return task_ids


def _return_if_running(annotator: Annotator, now: datetime) -> None:
    participant = Participant.objects.filter(annotator=annotator, stage__in=studies.RUNNING).first()
    if participant is not None:
        studies.end(participant, Participant.Stage.RETURNED, reason="excluded", now=now)


# --- exports -------------------------------------------------------------------------------------------------------

EXPORTS = ("approve", "reject", "bonus")


def decision_csv(link: StudyLink, which: str, *, bonus: str = "") -> str:
    """Platform ids to approve (completed, no rejection suggested, not excluded), to reject (at least two failed
    fair checks) or to bonus (the approved, with `bonus` as the amount: Prolific's "id,amount" bulk format)."""
    rows = participant_rows(link)
    if which == "reject":
        chosen = [r for r in rows if r.suggestion == "reject"]
        return to_csv(["participant_id", "failed_attention_checks"],
                      [[r.participant.platform_id, r.fair_failures] for r in chosen])
    approved = [r for r in rows if r.suggestion == "approve" and not r.excluded]
    if which == "approve":
        return to_csv(["participant_id"], [[r.participant.platform_id] for r in approved])
    amount = bonus_amount(bonus)
    return to_csv(["participant_id", "amount"], [[r.participant.platform_id, amount] for r in approved])


def bonus_amount(text: str) -> str:
    """The bonus per participant, a positive amount with at most two decimals ("0.50"); ValueError otherwise."""
    try:
        amount = Decimal(text)
    except (InvalidOperation, TypeError):
        raise ValueError(f"amount: must be a number such as 0.50, got {text!r}") from None
    if not amount.is_finite() or amount <= 0 or amount > 100 or amount != amount.quantize(Decimal("0.01")):
        raise ValueError(f"amount: must be more than 0 and at most 100, with at most two decimals, got {text!r}")
    return f"{amount:.2f}"
