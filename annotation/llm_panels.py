"""Judge panels: several LLM annotators on one task, their agreement, and the "mean of judges".

The mean of judges is the graded-relevance practice of averaging independent judges (three judges scoring
7, 0 and 0 give 2.33): a computed, virtual llm Annotator whose annotation on an item is the per-document
(per-pair, per-axis) mean of the judges' answers. It is recomputed on demand from the judges' current
annotations, over the items every judge answered, and stored like any annotator's answers (source
"llm-mean") so reports and leaderboards score it like one more judge. Means are not snapped to the scale's
step: they are computed values, not submissions, and never go through `validate_answer`.

Agreement between judges calls the pure functions of `agreement/metrics.py` (numbers in, numbers out);
that module has no Django or app state, so this is the only place annotation reads from agreement.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .llm_models import LLMJudgePanel
from .models import Annotation, Annotator

MEAN_KINDS = ("graded_relevance", "sts", "likert")
MEAN_SOURCE = "llm-mean"
LABEL_KINDS = ("classification", "pairwise")


def ensure_mean_annotator(panel: LLMJudgePanel) -> Annotator:
    """The panel's virtual "mean of judges" annotator (kind llm, no endpoint, cannot log in)."""
    if panel.mean_annotator_id:
        return panel.mean_annotator  # type: ignore[return-value]
    with transaction.atomic():
        name = f"mean-of-{slugify(panel.name) or 'judges'}-{panel.pk}"[:150]
        user = User.objects.create_user(username=name, password=None)
        panel.mean_annotator = Annotator.objects.create(user=user, kind=Annotator.Kind.LLM)
        panel.save(update_fields=["mean_annotator"])
    return panel.mean_annotator


def judge_answers(panel: LLMJudgePanel) -> dict[int, dict[int, Any]]:
    """{item_id: {judge_id: value}} for the judges' non-skipped answers on the panel's task, one query."""
    judge_ids = list(panel.judges.values_list("pk", flat=True))
    rows = Annotation.objects.filter(annotator_id__in=judge_ids, item__task_id=panel.task_id, skipped=False) \
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
    if panel.task.kind not in MEAN_KINDS:
        raise ValueError(f"a mean of judges is defined for {', '.join(MEAN_KINDS)}, not {panel.task.kind}")
    judge_ids = set(panel.judges.values_list("pk", flat=True))
    if len(judge_ids) < 1:
        raise ValueError("the panel has no judges")
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


def refresh_panel(panel: LLMJudgePanel) -> dict[str, Any]:
    """Recompute the mean of judges (numeric kinds) and the judges' agreement, and store both."""
    summary: dict[str, Any] = {}
    if panel.task.kind in MEAN_KINDS and panel.judges.exists():
        summary["mean"] = recompute_mean(panel)
    panel.agreement = judge_agreement(panel)
    panel.agreement_computed_at = timezone.now()
    panel.save(update_fields=["agreement", "agreement_computed_at"])
    summary["units"] = panel.agreement.get("units", 0)
    return summary


# ------------------------------------------------------------------ agreement between judges


def unit_matrix(panel: LLMJudgePanel, judge_ids: list[int]) -> tuple[list[list[float]], list[str]]:
    """Units × judges matrix of numbers (NaN when a judge has no answer) for the numeric kinds.

    A unit is an item (sts), an (item, document/candidate) pair (graded relevance, reranking) or an
    (item, axis) pair (likert): correlating per document is how graded-relevance judges are compared."""
    rows: dict[str, dict[int, float]] = defaultdict(dict)
    for item_id, by_judge in judge_answers(panel).items():
        for judge_id, value in by_judge.items():
            if isinstance(value, dict):
                for key, number in value.items():
                    rows[f"{item_id}:{key}"][judge_id] = float(number)
            else:
                rows[str(item_id)][judge_id] = float(value)
    units = sorted(rows)
    return [[rows[u].get(j, math.nan) for j in judge_ids] for u in units], units


def judge_agreement(panel: LLMJudgePanel) -> dict[str, Any]:
    """Agreement between the panel's judges, with a reason wherever a value is undefined."""
    judges = list(panel.judges.order_by("user__username"))
    kind = panel.task.kind
    result: dict[str, Any] = {"judges": [j.name for j in judges], "kind": kind, "overall": {}, "pairs": []}
    if kind in LABEL_KINDS:
        result.update(_label_agreement(panel, [j.pk for j in judges]))
    elif kind == "clustering":
        result.update(_clustering_agreement(panel, [j.pk for j in judges]))
    else:
        result.update(_numeric_agreement(panel, judges))
    return result


def _label_agreement(panel: LLMJudgePanel, ids: list[int]) -> dict[str, Any]:
    from agreement import metrics  # pure functions (no ORM); see the module docstring

    answers = judge_answers(panel)
    if not answers:
        return {"units": 0, "overall": {"fleiss_kappa": _value((None, "n/a: no answers yet"))}}
    rows = [[answers[i].get(j) for j in ids] for i in sorted(answers)]
    flat, categories = metrics.encode_labels([label for row in rows for label in row])
    codes = flat.reshape(len(rows), len(ids))
    return {"units": len(rows), "overall": {
        "fleiss_kappa": _value(metrics.fleiss_kappa.explain(metrics.count_table(codes, len(categories)))),
        "alpha_nominal": _value(metrics.krippendorff_alpha.explain(_nan_codes(codes))),
    }}


def _clustering_agreement(panel: LLMJudgePanel, ids: list[int]) -> dict[str, Any]:
    """Mean over items of the mean pairwise ARI between the judges' partitions of that item."""
    from agreement import metrics

    answers = judge_answers(panel)
    aris = [metrics.ari_mean.explain([by[j] for j in ids if j in by]) for by in answers.values()]
    values = [v for v, _ in aris if v is not None]
    mean = (sum(values) / len(values), None) if values else (None, "n/a: no item answered by two judges")
    return {"units": len(answers), "overall": {"mean_pairwise_ari": _value(mean)}}


def _numeric_agreement(panel: LLMJudgePanel, judges: list[Annotator]) -> dict[str, Any]:
    """Correlations and α over units (documents, candidates, axes), overall and for every pair of judges."""
    from agreement import metrics

    matrix, units = unit_matrix(panel, [j.pk for j in judges])
    if not units:
        return {"units": 0, "overall": {"pearson_mean": _value((None, "n/a: no answers yet"))}}
    level = {"reranking": "nominal", "likert": "ordinal"}.get(panel.task.kind, "interval")
    overall = {
        "pearson_mean": _value(metrics.pearson_mean.explain(matrix)),
        "spearman_mean": _value(metrics.spearman_mean.explain(matrix)),
        f"alpha_{level}": _value(metrics.krippendorff_alpha.explain(matrix, level=level)),
    }
    pairs = []
    for (a, ja), (b, jb) in itertools.combinations(enumerate(judges), 2):
        both = [(row[a], row[b]) for row in matrix if not (math.isnan(row[a]) or math.isnan(row[b]))]
        xs, ys = [p[0] for p in both], [p[1] for p in both]
        pairs.append({"a": ja.name, "b": jb.name, "units": len(both),
                      "pearson": _value(metrics.pearson.explain(xs, ys)),
                      "spearman": _value(metrics.spearman.explain(xs, ys))})
    return {"units": len(units), "overall": overall, "pairs": pairs}


def _value(explained: tuple[Any, str | None]) -> dict[str, Any]:
    value, reason = explained
    return {"value": value, "reason": reason}


def _nan_codes(codes: Any) -> list[list[float]]:
    """Integer codes with -1 for missing → floats with NaN, the layout krippendorff_alpha expects."""
    return [[math.nan if c < 0 else float(c) for c in row] for row in codes.tolist()]
