"""Making batches: from a task's pool, with the language rule, HUME's overlap preset and bulk creation.

The admin pages, the API and the `create_batch` command all call these, so the language rule and the
item order are the same whichever way a batch is made. Creating a batch twice with the same name returns
the first one (the command is idempotent); its items are never reshuffled once annotators started.

A *multilingual task* is the set of tasks sharing a non-empty `mteb_task_name` (MTEB's per-language subsets
of one dataset, e.g. SIB200Classification in eng-Latn, dan-Latn, ara-Arab), or a set of tasks an admin picks
together; bulk creation makes one batch per task of that set, each with its task's language.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.core.models import Annotator, AnnotatorLanguage, Batch, BatchAssignee, BatchItem, Hold
from tasks_app.core.models import Item, Task, language_code

HUME_ENGLISH_OVERLAP = 2  # HUME: two annotators per English item, one for every other language
DEFAULT_HOLD_SECONDS = 900


class AssignmentProblem(ValueError):
    """An assignment the rules forbid; `field` names the form/API field and the message says why."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message


def hume_overlap(language: str) -> int:
    """HUME's design: k = 2 for English, k = 1 otherwise."""
    return HUME_ENGLISH_OVERLAP if language.split("-")[0] == "eng" else 1


def default_batch_name(task: Task, language: str) -> str:
    return f"{task.name} · {language}"


def speaks(annotator: Annotator, language: str) -> bool:
    return AnnotatorLanguage.objects.filter(annotator=annotator, language=language).exists()


@dataclass(frozen=True)
class BatchSpec:
    """What an admin chooses for one batch; language and overlap default to the task's language and HUME."""

    task: Task
    language: str | None = None
    overlap: int | None = None
    name: str | None = None
    hold_seconds: int = DEFAULT_HOLD_SECONDS
    due_date: date | None = None


def create_batch(spec: BatchSpec, *, annotators: Iterable[Annotator] = (), override_reason: str = "",
                 created_by: AbstractBaseUser | None = None) -> tuple[Batch, bool]:
    """Create a batch with one BatchItem per pool item (positions in task order) and its assignees.
    Returns (batch, created); an existing batch of the same task and name is returned unchanged apart from
    newly listed assignees, so scripts can run twice."""
    language = spec.language or spec.task.language
    try:
        language_code(language)
    except ValidationError:
        raise AssignmentProblem("language", f"{language!r} is not an MTEB-style code such as eng-Latn.") from None
    overlap = spec.overlap if spec.overlap is not None else hume_overlap(language)
    if overlap < 1:
        raise AssignmentProblem("overlap", "Overlap k must be at least 1.")
    name = spec.name or default_batch_name(spec.task, language)
    with transaction.atomic():
        batch, created = Batch.objects.get_or_create(
            task=spec.task, name=name,
            defaults={"language": language, "overlap": overlap, "hold_seconds": spec.hold_seconds,
                      "due_date": spec.due_date, "created_by": created_by},
        )
        if created:
            add_pool_items(batch)
        assign(batch, annotators, override_reason=override_reason, assigned_by=created_by)
    return batch, created


def add_pool_items(batch: Batch) -> int:
    """BatchItem rows for the task's pool (its sampled subset when it has one), in the task's order."""
    item_ids = Item.objects.in_pool().filter(task=batch.task).order_by("position", "pk").values_list("pk", flat=True)
    rows = [BatchItem(batch=batch, item_id=item_id, position=i) for i, item_id in enumerate(item_ids, start=1)]
    BatchItem.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
    return len(rows)


def assign(batch: Batch, annotators: Iterable[Annotator], *, override_reason: str = "",
           assigned_by: AbstractBaseUser | None = None) -> list[BatchAssignee]:
    """Add annotators to a batch. Only annotators with the batch's language may be assigned, unless an admin
    gives a reason, which is recorded on the assignment. Already assigned annotators are left as they are."""
    annotators = list(annotators)
    reason = override_reason.strip()
    speakers = set(AnnotatorLanguage.objects.filter(annotator__in=annotators, language=batch.language)
                   .values_list("annotator_id", flat=True))
    missing = [a.name for a in annotators if a.pk not in speakers]
    if missing and not reason:
        raise AssignmentProblem(
            "annotators", f"{', '.join(missing)} do(es) not list {batch.language} among their languages; "
                          "give an override reason to assign anyway.",
        )
    rows = [BatchAssignee(batch=batch, annotator=a, assigned_by=assigned_by,
                          override_reason=reason if a.name in missing else "") for a in annotators]
    BatchAssignee.objects.bulk_create(rows, ignore_conflicts=True)
    return list(BatchAssignee.objects.filter(batch=batch, annotator__in=annotators))


def unassign(batch: Batch, annotator: Annotator) -> None:
    """Take an annotator off a batch; items they held go back to the pool, their answers stay."""
    with transaction.atomic():
        BatchAssignee.objects.filter(batch=batch, annotator=annotator).delete()
        Hold.objects.filter(batch_item__batch=batch, annotator=annotator).delete()


def multilingual_group(task: Task) -> list[Task]:
    """The tasks sharing `task`'s MTEB task name (one per language/subset), or just `task` when it has none."""
    if not task.mteb_task_name:
        return [task]
    return list(Task.objects.filter(mteb_task_name=task.mteb_task_name).order_by("language", "name"))


def create_language_batches(tasks: Iterable[Task], *, overlap: int | None = None, assign_speakers: bool = True,
                            hold_seconds: int = DEFAULT_HOLD_SECONDS, due_date: date | None = None,
                            created_by: AbstractBaseUser | None = None) -> list[tuple[Batch, bool]]:
    """One batch per task of a multilingual set, in one transaction. Overlap None applies HUME's preset per
    language; with assign_speakers the active human annotators who list the language are assigned."""
    results = []
    with transaction.atomic():
        for task in tasks:
            spec = BatchSpec(task=task, overlap=overlap, hold_seconds=hold_seconds, due_date=due_date)
            speakers = speakers_of(task.language) if assign_speakers else []
            results.append(create_batch(spec, annotators=speakers, created_by=created_by))
    return results


def speakers_of(language: str) -> list[Annotator]:
    """Active human annotators of `language`, study participants left out: each exists for its one study
    (docs/crowd.md), and a completed one stays active until its deadline only to revise its answers."""
    return list(Annotator.objects.filter(active=True, agent=Annotator.Agent.HUMAN, languages__language=language,
                                         participant__isnull=True).select_related("user").distinct())
