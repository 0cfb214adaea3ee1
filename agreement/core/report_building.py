"""Building the report document of a task from the answers a run loaded: the whole task, then each batch and each
language (the report's job is in ``agreement/core/reports.py``, its queue in ``agreement/core/report_queue.py``).

Metric arithmetic lives in ``measures/metrics.py`` and ``agreement/core/scoring.py`` (through each kind's scorer);
this module only shapes rows for them and arranges what they return into the document, whose keys are typed in
``agreement/core/report_document.py`` and documented in docs/reports.md.
"""
from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice, repeat
from operator import itemgetter
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count

from agreement.core import loading
from agreement.core.loading import LoadedAnswers
from agreement.core.report_document import ReportDocument, ScoredPart
from agreement.core.scoring import SCORERS, score_task
from annotation.models import Annotator, ExclusionEvent
from tasks_app.models import Task

# Items kept in a stored report's item-level view: the most disagreed ones by each of the two orders.
DISAGREEMENT_KEEP = 1000
EXCLUDED_KEEP = 1000  # the first exclusions are listed; all are counted in n_excluded and excluded_reasons
Progress = Callable[[str, int], None]


def build_report(task: Task, loaded: LoadedAnswers, progress: Progress | None = None) -> ReportDocument:
    """The report document of a task from what was loaded: the whole task, then per batch and language."""
    step = progress or (lambda stage, percent: None)
    step("scoring the task", 30)
    whole = score_rows(task, loaded)
    doc: ReportDocument = {  # type: ignore[typeddict-item]  (the whole's keys come in by **whole)
        "format_version": loading.REPORT_FORMAT_VERSION,
        "task": task.name,
        "task_id": task.pk,
        "language": task.language,
        "mteb_task_name": task.mteb_task_name,
        "mteb_subset": task.mteb_subset,
        **whole,
        "disagreement": keep_most_disagreed(whole["disagreement"]),
        "excluded": whole["excluded"][:EXCLUDED_KEEP],
        "excluded_reasons": dict(Counter(entry["reason"] for entry in whole["excluded"])),
        "n_rows_read": len(loaded),
        "excluded_annotators": excluded_annotators(task),
        "reincluded_annotators": reincluded_annotators(task),
        "answers_digest": loaded.answers_digest,
        "inputs_digest": loaded.inputs_digest,
    }
    step("scoring batches and languages", 70)
    batches = loaded.batches
    batch_keys, batch_rows = distinct_and_inverse(loaded.batch_ids)
    doc["by_batch"] = [{"batch_id": pk, "batch": batches[pk][0], "language": batches[pk][1], **part}
                       for pk, part in score_groups(task, loaded, whole, batch_keys, batch_rows) if pk]
    language_of = [task.language if not pk else batches[pk][1] for pk in batch_keys]
    languages = sorted(set(language_of))
    if len(languages) <= 1:  # one language: the whole task's numbers
        doc["by_language"] = [{"language": code, **summary(whole)} for code in languages]
    else:
        language_rows = np.array([languages.index(code) for code in language_of])[batch_rows]
        doc["by_language"] = [{"language": code, **part}
                              for code, part in score_groups(task, loaded, whole, languages, language_rows)]
    return doc


def excluded_annotators(task: Task) -> list[dict[str, Any]]:
    """The annotators with answers on this task whom an admin excluded (their answers were not read), each with
    how many answers (skips included) on the task were left out."""
    rows = (Annotator.objects.filter(excluded_at__isnull=False, annotations__item__task_id=task.pk)
            .annotate(n_answers=Count("annotations")).order_by("user__username")
            .values_list("user__username", "excluded_reason", "excluded_at", "n_answers"))
    return [{"name": name, "reason": reason, "excluded_at": at.isoformat(), "n_answers": n_answers}
            for name, reason, at, n_answers in rows]


def reincluded_annotators(task: Task) -> list[dict[str, Any]]:
    """The annotators with answers on this task who were excluded and then included again (their answers are
    read), each with their latest undo: its reason, time and how many of their items it left above overlap k
    (every answer is kept; docs/crowd.md, "Exclusion")."""
    events = (ExclusionEvent.objects.filter(action=ExclusionEvent.Action.INCLUDE, annotator__excluded_at__isnull=True,
                                            annotator__annotations__item__task_id=task.pk).distinct()
              .order_by("annotator__user__username", "-at", "-pk")
              .values_list("annotator__user__username", "reason", "at", "n_items_over_k"))
    latest: dict[str, dict[str, Any]] = {}
    for name, reason, at, n_over in events:
        latest.setdefault(name, {"name": name, "reason": reason, "included_at": at.isoformat(),
                                 "n_items_over_k": n_over})
    return list(latest.values())


def distinct_and_inverse(column: np.ndarray) -> tuple[list[int], np.ndarray]:
    """np.unique(column, return_inverse=True), without its sort of every row when all rows hold one value
    (the usual report: one batch)."""
    if len(column) and bool((column == column[0]).all()):
        return [int(column[0])], np.zeros(len(column), dtype=np.intp)
    keys, inverse = np.unique(column, return_inverse=True)
    return keys.tolist(), inverse


def score_rows(task: Task, loaded: LoadedAnswers, rows: np.ndarray | None = None) -> ScoredPart:
    """Shape the rows (all, or the given row numbers) as score_task wants them; add the flag counts."""
    items, names, values = loaded.items, loaded.annotators, loaded.values
    if rows is None:
        # Each item's answers are one run of rows: dict() takes each run's (annotator, value) pairs from one
        # shared iterator, so the 100,000 dicts are built by C loops, not a Python loop (half the time).
        pairs = zip(names, values, strict=True)
        answers = dict(zip(items, map(dict, map(islice, repeat(pairs), loaded.run_lengths())), strict=True))
        flags = np.flatnonzero(loaded.flagged)
    else:
        grouped: dict[str, dict[str, Any]] = defaultdict(dict)
        for row, item in zip(rows.tolist(), loaded.item_of_rows(rows).tolist(), strict=True):
            grouped[items[item]][names[row]] = values[row]
        answers = dict(grouped)
        flags = rows[loaded.flagged[rows]]
    gold = loaded.gold
    if not gold.keys() <= answers.keys():  # items nobody answered are progress, not part of the report
        gold = {key: gold[key] for key in answers if key in gold}
    lo, hi, _ = task.scale
    result = score_task(task.kind, answers, gold, labels=task.labels or None, scale=(lo, hi) if hi > lo else None,
                        axes=task.axes or None, annotator_agents=loaded.annotator_agents,
                        kappa_min_shared=settings.KAPPA_MIN_SHARED_ITEMS, with_charts=rows is None,
                        aggregation=loaded.aggregation,
                        annotator_models_max_answers=settings.ANNOTATOR_MODELS_MAX_ANSWERS if rows is None else 0)
    per_annotator = Counter(names[row] for row in flags.tolist())
    for annotator in result["annotators"]:
        annotator["n_flagged"] = per_annotator.get(annotator["name"], 0)
    result["n_flagged"] = len(flags)
    result["n_flagged_items"] = len(set(loaded.item_of_rows(flags).tolist()))
    result["agreement_main"] = main_agreement(task, result["agreement"])
    return result


def main_agreement(task: Task, agreement: dict[str, Any]) -> str | None:
    """The agreement value a task is judged by (HUME: κ for labels, ARI, Spearman's ρ, α per likert axis):
    its scorer's `main_agreement`, else the first agreement value there is."""
    name: str | None = SCORERS[task.kind].main_agreement
    if name and "{axis}" in name:
        name = name.format(axis=task.axes[0]) if task.axes else None
    return name if name in agreement else next(iter(agreement), None)


def score_groups(
    task: Task, loaded: LoadedAnswers, whole: ScoredPart, keys: list[Any], group_of_row: np.ndarray
) -> Iterable[tuple[Any, ScoredPart]]:
    """Score each group of rows (`group_of_row[i]`: row i's index into `keys`); one group reuses the whole task's."""
    if len(keys) == 1:  # the usual case (one batch, one language): the whole task's numbers
        yield keys[0], summary(whole)
        return
    order = np.argsort(group_of_row, kind="stable")
    bounds = np.searchsorted(group_of_row[order], np.arange(len(keys) + 1))
    for index in sorted(range(len(keys)), key=lambda i: str(keys[i])):
        rows = order[bounds[index]:bounds[index + 1]]
        if len(rows):
            yield keys[index], summary(score_rows(task, loaded, rows))


def summary(result: ScoredPart) -> ScoredPart:
    """A part's numbers without its item-level lists (those are for the whole task only)."""
    return {k: v for k, v in result.items() if k not in ("disagreement", "excluded", "charts")}  # type: ignore[return-value]


def keep_most_disagreed(rows: list[dict[str, Any]], keep: int = DISAGREEMENT_KEEP) -> list[dict[str, Any]]:
    """The items most disagreed on among annotators, plus those most off gold, in score_task's order."""
    if len(rows) <= keep:
        return rows
    off_gold = np.array(list(map(itemgetter("gold_disagreement"), rows)), dtype=float)  # None → NaN
    off_gold[np.isnan(off_gold)] = -1.0
    by_gold = np.argsort(-off_gold, kind="stable")[:keep]
    chosen = set(range(keep)) | set(by_gold.tolist())
    return [rows[i] for i in sorted(chosen)]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a run builds its hundreds of thousands of objects.

    They hold no reference cycles, yet every few hundred allocations the collector would traverse the
    growing heap again (about 20% of a large report's time); one collection after the run is enough.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
