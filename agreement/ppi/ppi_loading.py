"""Reading a task's human answers and one judge's answers into the numbers PPI estimates from.

The population is the task's pool (its sampled items when it has a sample, else all items). The judge must
have answered every pool item; the labelled items are those with at least one human answer, and an item's
human value is the mean of its humans' numbers (`agreement/ppi/estimands.py`). Skipped answers count as no
answer. Items carry a system or group (`Item.system`, `Item.group`) when the dataset gives one (docs/import.md,
"System and group"). Reading changes nothing: a refused input raises `PPIInputError` and writes no row.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np
from django.db.models import Min, Q

from agreement.ppi.estimands import OffScale, Scale, estimand_bounds, estimand_names, numbers
from agreement.ppi.models import PPIDraw
from annotation.models import Annotation, AnnotationRevision, Annotator, BatchItem
from measures.ppi.active import pooled_draws, usable_prefix
from measures.ppi.task_estimates import STRATA_FIELDS, StudyNumbers, rows_to_numbers
from tasks_app.core.kinds import KINDS
from tasks_app.models import Item, Task

MAX_PROBLEMS = 10  # listed in one error; the rest are counted


class PPIInputError(ValueError):
    """Input PPI cannot use: the message says what is wrong and where."""


def task_scale(task: Task, threshold: float | None = None) -> Scale:
    """The estimands' view of the task; refuses kinds with no PPI estimate."""
    lo, hi, _step = task.scale
    kind = task.kind_definition
    estimands = kind.ppi_estimands
    if estimands is None:
        supported = [name for name, other in KINDS.items() if other.ppi_estimands is not None]
        raise PPIInputError(f"task {task.name!r}: {task.kind} tasks have no PPI estimate: it is defined for "
                            f"{', '.join(supported)} (a mean over items of a number each answer gives)")
    if threshold is None:
        threshold = estimands.default_threshold(lo, hi)
    scale = Scale(task.kind, lo, hi, tuple(task.labels or ()), tuple(task.axes or ()), threshold, estimands)
    if kind.needs_labels and not scale.labels:
        raise PPIInputError(f"task {task.name!r}: a {task.kind} task needs its label set for PPI estimates")
    return scale


def find_judge(task: Task, name: str) -> Annotator:
    """The LLM annotator (or imported machine answers) named `name`; a person is refused."""
    judge = Annotator.objects.select_related("user").filter(user__username=name).first()
    if judge is None:
        raise PPIInputError(f"no annotator named {name!r}: give the judge's name (an LLM annotator, or imported "
                            "answers with annotator_agent llm)")
    if judge.agent != Annotator.Agent.LLM:
        raise PPIInputError(f"{name!r} is a person (a human annotator), not a judge: PPI combines the humans' "
                            "answers with a machine's; give an LLM annotator's name")
    if judge.excluded_at is not None:  # its answers count in no number (docs/crowd.md, "Exclusion")
        raise PPIInputError(f"judge {name!r} is excluded ({judge.excluded_reason}): its answers count in no "
                            "estimate; include it again (exclude_annotator --undo) to use it")
    return judge


def pool_items(task: Task) -> list[tuple[int, str, dict[str, Any], str, str]]:
    """(id, external id, payload, system, group) of each pool item, in task order."""
    return list(Item.objects.in_pool().filter(task=task).order_by("position", "pk")
                .values_list("pk", "external_id", "payload", "system", "group"))


def load_numbers(task: Task, judge_name: str, *, threshold: float | None = None) -> StudyNumbers:
    """The judge's and the humans' numbers on the task's pool items; raises PPIInputError naming what is wrong
    (a person as judge, a judge that missed items, no human labels, answers off the task's scale)."""
    scale = task_scale(task, threshold)
    judge = find_judge(task, judge_name)
    items = pool_items(task)
    if not items:
        raise PPIInputError(f"task {task.name!r} has no items")
    pool = {row[0] for row in items}
    answers = (Annotation.objects.counted().filter(item__task=task, skipped=False)
               .filter(Q(annotator__agent=Annotator.Agent.HUMAN) | Q(annotator=judge))
               .order_by("item_id", "annotator_id")
               .values_list("item_id", "annotator_id", "annotator__user__username", "value", "submitted_at"))
    judge_values: dict[int, Any] = {}
    human_values: dict[int, list[tuple[str, Any]]] = defaultdict(list)
    first_label: dict[int, Any] = {}
    for item_id, annotator_id, annotator_name, value, submitted_at in answers:
        if item_id not in pool:
            continue  # outside the task's sample: not part of the population estimated
        if annotator_id == judge.pk:
            judge_values[item_id] = value
        else:
            human_values[item_id].append((annotator_name, value))
            first_label[item_id] = min(first_label.get(item_id, submitted_at), submitted_at)
    check_coverage(task, judge_name, items, judge_values, human_values)
    numbers = decode(task, judge_name, scale, items, judge_values, human_values)
    numbers = replace(numbers, label_order=label_order(task, items, first_label))
    draws = active_draws(task, items, numbers.labelled)
    return numbers if draws is None else replace(numbers, draw_rows=draws[0], draw_weights=draws[1])


def label_order(task: Task, items: list[tuple[int, str, dict[str, Any], str, str]],
                first_label: dict[int, Any]) -> np.ndarray:
    """The labelled items' rows in the order people first labelled them, the order the confidence sequence
    reads them in: an item's time is its earliest human answer, counting answers since revised (a revision
    does not move an item later). Answers of one import share one time (annotation/answer_import.py), so ties
    are broken by a digest of the item's id: an order no file's line order can change (a file sorted by value
    would otherwise put its values in order)."""
    revised = (AnnotationRevision.objects
               .filter(annotation__item__task=task, annotation__annotator__agent=Annotator.Agent.HUMAN, skipped=False)
               .values_list("annotation__item_id").annotate(first=Min("previous_submitted_at")))
    first = dict(first_label)
    for item_id, earlier in revised:
        if item_id in first:  # labelled now (an item whose answer is now a skip is not)
            first[item_id] = min(first[item_id], earlier)
    row_of = {row[0]: index for index, row in enumerate(items)}
    digest = {row[0]: hashlib.sha256(row[1].encode()).hexdigest() for row in items}
    arrival = sorted(first, key=lambda pk: (first[pk], digest[pk]))
    return np.array([row_of[pk] for pk in arrival], dtype=int)


def judge_numbers(task: Task, judge_name: str, *, threshold: float | None = None) -> np.ndarray:
    """One judge's numbers on every pool item (items × estimands), for the spread between judges that active
    sampling draws by; refuses a person, a judge that missed items and answers off the scale."""
    scale = task_scale(task, threshold)
    judge = find_judge(task, judge_name)
    items = pool_items(task)
    values = dict(Annotation.objects.counted().filter(item__task=task, annotator=judge, skipped=False)
                  .values_list("item_id", "value"))
    check_judge_coverage(task, judge_name, items, values)
    return decode(task, judge_name, scale, items, values, {}).judge


def active_draws(task: Task, items: list[tuple[int, str, dict[str, Any], str, str]],
                 labelled: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, weights) of every labelled draw when some batch of the task was drawn actively, else None."""
    drawn = list(PPIDraw.objects.filter(batch__task=task).order_by("created_at", "pk")
                 .values_list("batch_id", "batch__name", "item_ids", "probabilities", "draws"))
    if not drawn:
        return None
    ids = [row[0] for row in items]
    row_of = {pk: index for index, pk in enumerate(ids)}
    active_items = set(BatchItem.objects.filter(batch_id__in=[d[0] for d in drawn]).values_list("item_id", flat=True))
    phases = []
    for _batch_id, batch_name, item_ids, probabilities, draws in drawn:
        if item_ids != ids:
            raise PPIInputError(f"batch {batch_name!r} was drawn from another pool than the task's items now "
                                "(items were added or the sample changed): its draw probabilities no longer apply")
        phases.append((np.asarray(probabilities, dtype=float), usable_prefix([row_of[pk] for pk in draws], labelled)))
    uniform_rows = [row_of[pk] for pk in ids if labelled[row_of[pk]] and pk not in active_items]
    return pooled_draws(len(ids), uniform_rows, phases)


def check_coverage(task: Task, judge_name: str, items: list[tuple[int, str, dict[str, Any], str, str]],
                   judge_values: dict[int, Any], human_values: dict[int, list[tuple[str, Any]]]) -> None:
    check_judge_coverage(task, judge_name, items, judge_values)
    if not any(row[0] in human_values for row in items):
        raise PPIInputError(f"task {task.name!r} has no human answers on its items: PPI needs people's labels "
                            "on a sample of them")


def check_judge_coverage(task: Task, judge_name: str, items: list[tuple[int, str, dict[str, Any], str, str]],
                         judge_values: dict[int, Any]) -> None:
    if not items:
        raise PPIInputError(f"task {task.name!r} has no items")
    missing = [row[1] for row in items if row[0] not in judge_values]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:MAX_PROBLEMS])
        raise PPIInputError(
            f"judge {judge_name!r} answered {len(items) - len(missing)} of the {len(items)} items of task "
            f"{task.name!r}; PPI needs the judge's answer on every item. Missing ({len(missing)}): {shown}"
            + (" …" if len(missing) > MAX_PROBLEMS else ""))


def decode(task: Task, judge_name: str, scale: Scale, items: list[tuple[int, str, dict[str, Any], str, str]],
           judge_values: dict[int, Any], human_values: dict[int, list[tuple[str, Any]]]) -> StudyNumbers:
    problems: list[str] = []
    judge_rows, human_rows = [], []

    def read(value: Any, external_id: str, annotator: str, payload: dict[str, Any]) -> dict[str, float]:
        try:
            return numbers(value, scale, [d["id"] for d in payload.get("documents", ())])
        except OffScale as problem:
            problems.append(f"item {external_id!r}, annotator {annotator!r}: {problem}")
            return {}

    for pk, external_id, payload, _system, _group in items:
        judge_rows.append(read(judge_values[pk], external_id, judge_name, payload))
        human_rows.append([read(v, external_id, name, payload) for name, v in human_values.get(pk, ())])
    if problems:
        shown = "; ".join(problems[:MAX_PROBLEMS])
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        raise PPIInputError(f"task {task.name!r}: {len(problems)} answer(s) are not on the task's scale, so "
                            f"they cannot be averaged with the others: {shown}{more}")
    strata = {name: [row[3 + k] for row in items] for k, name in enumerate(STRATA_FIELDS)}
    humans = {name for answers in human_values.values() for name, _v in answers}
    return rows_to_numbers([row[1] for row in items], estimand_names(scale), judge_rows, human_rows,
                           strata={k: v for k, v in strata.items() if any(v)}, bounds=estimand_bounds(scale),
                           n_human_answers=sum(len(a) for a in human_rows), n_annotators_scored=len(humans))
