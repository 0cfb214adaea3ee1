"""This project's humans, LLM annotators and models run here as comparison entries (one subset per mapped task
and language).

A project Task joins the comparison when an admin sets ``Task.mteb_task_name`` (and ``mteb_subset``, shown
beside it): its human score then sits in the same (MTEB task, language) cell as the imported model scores.
Batches may be in other languages than the task's own; each language is its own subset, as in HUME where
MultilingualSentiment has an Arabic, a Norwegian and a Russian part.

Scores come from the agreement report (``scoring.score_task``, HUME's protocol): the human block gives
the score, its CI and the agreement; the ``annotators`` entries whose ``agent`` is ``llm`` give one row per LLM
annotator, scored exactly like a human and never part of the human score (HUME §3.6).

Only stored reports are read: metrics are computed by workers, never while a page is built. A mapped task
with answers but no stored report is listed in ``Comparison.pending``; the pages queue its first report
(:func:`queue_missing_reports`) and show it as being computed until the worker has stored it.
"""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db.models import Exists, OuterRef

from agreement.core import scoring
from agreement.core.models import Report
from agreement.core.reports import ReportQueueError, request_first_report
from agreement.model_runs.models import ModelRun
from agreement.model_runs.rows import latest_runs
from agreement.results.entries import (
    PROJECT_HUMANS,
    Comparison,
    Entry,
    HumanSubset,
    PendingReport,
    agreement_family,
    kind_of_task,
)
from annotation.models import Annotation
from measures import metrics as m
from measures.results.subset_scores import SubsetScore
from tasks_app.models import Task

STORED = "stored report"


def add_project_entries(comparison: Comparison) -> None:
    """Append this project's human and LLM scores, their CIs and agreement, and the task mappings."""
    humans: dict[tuple[str, str], HumanSubset] = {}
    answered = Exists(Annotation.objects.counted().filter(item__task=OuterRef("pk")))
    mapped = Task.objects.exclude(mteb_task_name="").select_related("agreement_report").annotate(answered=answered)
    for task in mapped.order_by("name"):
        comparison.kinds.setdefault(task.mteb_task_name, kind_of_task(task.mteb_task_name, task.kind))
        reports = task_reports(task)
        if not reports:
            pending = PendingReport.of(task, getattr(task, "agreement_report", None)) if task.answered else None
            comparison.mappings.append(_mapping_row(task, task.language, {},
                                                    pending.origin if pending else "no answers yet"))
            if pending:
                comparison.pending.append(pending)
        for language, report, origin in reports:
            human = report.get("human") or {}
            key = (task.mteb_task_name, language)
            comparison.mappings.append(_mapping_row(task, language, report, origin))
            if human.get("main_score") is None:
                continue
            if key in humans:
                comparison.warnings.append(
                    f"{task.name} also maps to {task.mteb_task_name} ({language}); only {humans[key].source} counts.")
                continue
            humans[key] = _human_subset(task, report)
            comparison.scores.append(SubsetScore(PROJECT_HUMANS, "human", key[0], language, human["main_score"]))
            _add_llms(comparison, task, language, report)
    if humans:
        comparison.entries[PROJECT_HUMANS] = Entry(PROJECT_HUMANS, "human", "this project")
        comparison.humans[PROJECT_HUMANS] = humans


def task_reports(task: Task) -> list[tuple[str, dict[str, Any], str]]:
    """(language, report part, origin) for each language of the task's stored report (``Report.result``,
    one part per batch language); none when no report is stored (never computed here)."""
    report = getattr(task, "agreement_report", None)
    if report is None or not report.result:
        return []
    origin = STORED if report.status == Report.Status.DONE else f"{STORED} ({report.status}: being updated)"
    return _parts(task, report.result, origin)


def queue_missing_reports(comparison: Comparison) -> list[str]:
    """Queue the first report of each pending task that never had one (after commit, for a worker); the
    Report row created here is the lock, so pages opened at once queue one job. Returns the queueing errors
    (broker down), which the report rows record too."""
    errors = []
    for pending in comparison.pending:
        # Only a report never asked for: a queued or running one is under way, and a failed one waits for
        # a researcher on its report page (which says why and offers "recompute"), not for every page view.
        if pending.status is None:
            try:
                request_first_report(pending.task_id)
            except ReportQueueError as exc:
                errors.append(f"{pending.task}: {exc}")
    if comparison.pending:
        comparison.pending = pending_reports([pending.task_id for pending in comparison.pending])
    return errors


def pending_reports(task_ids: Collection[int]) -> list[PendingReport]:
    """The report states of these tasks, for the part of a page that waits for them."""
    tasks = Task.objects.filter(pk__in=task_ids).select_related("agreement_report").order_by("name")
    return [PendingReport.of(task, getattr(task, "agreement_report", None)) for task in tasks]


def _parts(task: Task, result: dict[str, Any], origin: str) -> list[tuple[str, dict[str, Any], str]]:
    parts = result.get("by_language") or [{"language": task.language, **result}]
    return [(part.get("language") or task.language, part, origin) for part in parts]


def _human_subset(task: Task, report: dict[str, Any]) -> HumanSubset:
    human = report["human"]
    metric, value = primary_agreement(task.kind, report.get("agreement") or {})
    family = agreement_family(metric)
    low, high = human.get("ci_low"), human.get("ci_high")
    return HumanSubset(
        ci=(low, high) if low is not None and high is not None else None,
        ci_method=human.get("ci_method"), n_items=human.get("n") or report.get("n_items"),  # texts, not sets
        n_annotators=report.get("n_annotators"),
        agreement_metric=metric, agreement=value, band=m.agreement_band(value, family),
        low_agreement=bool((report.get("flags") or {}).get("low_agreement")), source=task.name)


def primary_agreement(kind: str, agreement: dict[str, Any]) -> tuple[str | None, float | None]:
    """The kind's first agreement metric (κ, ARI, ρ…) — stored JSON keeps no key order, so ask the scorer."""
    names = [*getattr(scoring.SCORERS.get(kind), "agreement_metrics", ()), *sorted(agreement)]
    for name in names:
        if agreement.get(name) is not None:
            return name, float(agreement[name])
    return (names[0] if names else None), None


def _add_llms(comparison: Comparison, task: Task, language: str, report: dict[str, Any]) -> None:
    main = (report.get("human") or {}).get("main_metric")
    for annotator in report.get("annotators") or []:
        score = (annotator.get("scores") or {}).get(main)
        if annotator.get("agent") != "llm" or score is None:
            continue
        name = _llm_entry_name(comparison, annotator["name"])
        comparison.entries.setdefault(name, Entry(name, "llm", "this project"))
        comparison.scores.append(SubsetScore(name, "llm", task.mteb_task_name, language, float(score)))


def _llm_entry_name(comparison: Comparison, name: str) -> str:
    """An LLM annotator keeps its name unless a model or human already uses it."""
    entry = comparison.entries.get(name)
    return name if entry is None or entry.agent == "llm" else f"{name} (LLM annotator)"


def _mapping_row(task: Task, language: str, report: dict[str, Any], origin: str) -> dict[str, Any]:
    human = report.get("human") or {}
    return {"task_id": task.pk, "task": task.name, "kind": task.kind, "language": language,
            "mteb_task_name": task.mteb_task_name, "mteb_subset": task.mteb_subset,
            "main_metric": human.get("main_metric"), "human": human.get("main_score"),
            "reason": human.get("reason"), "n_items": report.get("n_items"),
            "n_annotators": report.get("n_annotators"), "origin": origin}


# ---------------------------------------------------------------------------------------------
# Models run here (agreement/model_runs/), on the study's own items

RUN_HERE = " (run here)"


def run_entry_name(run: ModelRun) -> str:
    return (run.model.mteb_name or run.model.name) + RUN_HERE


def add_model_run_entries(comparison: Comparison) -> None:
    """A mapped task's latest finished run of each model, scored against gold, as a model entry.

    A task joins when it has an MTEB task name (as for its humans). The entry is named after the model's
    MTEB name when it has one, marked "(run here)", so the in-app run of sentence-transformers/all-MiniLM-L6-v2
    sits next to the imported MTEB result of the same model and is recognisably the same model, yet kept apart
    (it is scored on the study's items, not on MTEB's full split). The score is the run's main score against
    gold; a run whose score rests on too few items (the kind's model evaluation, `too_few_items`) is left out,
    with a warning.
    """
    for task in Task.objects.exclude(mteb_task_name=""):
        for run in latest_runs(task.pk):
            gold = ((run.scores or {}).get("gold") or {}) if run.status == "done" else {}
            score = gold.get("main_score")
            if score is None:
                continue
            name = run_entry_name(run)
            if gold.get("too_few_items"):  # never ranked or named best on a score that says nothing
                comparison.warnings.append(f"{name} on {task.name} is left out: too few items "
                                           f"({gold['too_few_items']}).")
                continue
            comparison.entries.setdefault(name, Entry(name, "model", "this project", run.model.revision[:12]))
            comparison.scores.append(SubsetScore(name, "model", task.mteb_task_name, task.language, float(score)))
