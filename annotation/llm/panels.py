"""Judge panels: several LLM annotators on one task and their "mean of judges".

The mean of judges is the graded-relevance practice of averaging independent judges (three judges scoring
7, 0 and 0 give 2.33): a computed, virtual llm Annotator whose annotation on an item is the per-document
(per-pair, per-axis) mean of the judges' answers. It is recomputed on demand from the judges' current
annotations, over the items every judge answered, and stored like any annotator's answers (source
"llm-mean") so reports and leaderboards score it like one more judge. Means are not snapped to the scale's
step: they are computed values, not submissions, and never go through `validate_answer`. A mean is defined
for the kinds whose answers are numbers on a scale (`averageable` in tasks_app/core/kinds.py).

Agreement between the judges is a metric, so it lives in `agreement/core/judge_panels.py`, which also runs the
refresh (mean, then agreement) in the worker; annotation asks for it with the `judge_panel_refresh_requested`
signal and never imports agreement (docs/architecture.md).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation.core.annotators import create_annotator
from annotation.core.models import Annotation, Annotator
from annotation.llm.models import LLMJudgePanel
from tasks_app.core.kinds import KINDS

MEAN_SOURCE = "llm-mean"


def ensure_mean_annotator(panel: LLMJudgePanel) -> Annotator:
    """The panel's virtual "mean of judges" annotator (agent llm, no endpoint, cannot log in)."""
    if panel.mean_annotator_id:
        return panel.mean_annotator  # type: ignore[return-value]
    with transaction.atomic():
        name = f"mean-of-{slugify(panel.name) or 'judges'}-{panel.pk}"[:150]
        panel.mean_annotator = create_annotator(name, agent=Annotator.Agent.LLM)
        panel.save(update_fields=["mean_annotator"])
    return panel.mean_annotator


def judge_answers(panel: LLMJudgePanel) -> dict[int, dict[int, Any]]:
    """{item_id: {judge_id: value}} for the judges' non-skipped answers on the panel's task, one query."""
    judge_ids = list(panel.judges.counted().values_list("pk", flat=True))
    rows = Annotation.objects.counted().filter(annotator_id__in=judge_ids, item__task_id=panel.task_id, skipped=False) \
        .values_list("item_id", "annotator_id", "value")
    answers: dict[int, dict[int, Any]] = defaultdict(dict)
    for item_id, judge_id, value in rows:
        answers[item_id][judge_id] = value
    return dict(answers)


def mean_value(values: list[Any]) -> Any:
    """Mean of numbers, or per-key mean of {key: number} answers (documents, axes)."""
    if isinstance(values[0], dict):
        return {key: round(sum(float(v[key]) for v in values) / len(values), 4) for key in values[0]}
    return round(sum(float(v) for v in values) / len(values), 4)


def recompute_mean(panel: LLMJudgePanel) -> dict[str, int]:
    """Replace the mean annotator's answers with the current means; returns item counts for the page."""
    if not panel.task.kind_definition.averageable:
        defined = ", ".join(name for name, kind in KINDS.items() if kind.averageable)
        raise ValueError(f"a mean of judges is defined for {defined}, not {panel.task.kind}")
    judge_ids = set(panel.judges.counted().values_list("pk", flat=True))  # an excluded judge's answers count nowhere
    if len(judge_ids) < 1:
        raise ValueError("the panel has no judges (whose answers count: none is excluded)")
    answers = judge_answers(panel)
    complete = {item: by_judge for item, by_judge in answers.items() if set(by_judge) >= judge_ids}
    mean = ensure_mean_annotator(panel)
    with transaction.atomic():
        Annotation.objects.filter(annotator=mean, item__task_id=panel.task_id).delete()
        Annotation.objects.bulk_create([
            Annotation(item_id=item, annotator=mean, value=mean_value([by_judge[j] for j in sorted(judge_ids)]),
                       source=MEAN_SOURCE)
            for item, by_judge in sorted(complete.items())
        ])
        panel.mean_computed_at = timezone.now()
        panel.save(update_fields=["mean_computed_at"])
    return {"items": len(complete), "items_missing_a_judge": len(answers) - len(complete)}
