"""Agreement between the LLM judges of a panel, and the panel refresh the worker runs.

The panel, its judges and the "mean of judges" annotator belong to annotation (`annotation/llm/panels.py`);
comparing the judges is metric work, so it is here and calls the pure functions of `measures/metrics.py`.
The refresh is the Celery task `agreement.tasks.refresh_judge_panel`, enqueued after commit when annotation
sends `judge_panel_refresh_requested` (see `agreement/signals.py`).
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

from django.utils import timezone

from agreement.core.scoring import SCORERS
from annotation.llm.models import LLMJudgePanel
from annotation.llm.panels import judge_answers, recompute_mean
from annotation.models import Annotator
from measures import metrics


def refresh_panel(panel: LLMJudgePanel) -> dict[str, Any]:
    """Recompute the mean of judges (numeric kinds) and the judges' agreement, and store both."""
    summary: dict[str, Any] = {}
    if panel.task.kind_definition.averageable and panel.judges.counted().exists():
        summary["mean"] = recompute_mean(panel)
    panel.agreement = judge_agreement(panel)
    panel.agreement_computed_at = timezone.now()
    panel.save(update_fields=["agreement", "agreement_computed_at"])
    summary["units"] = panel.agreement.get("units", 0)
    return summary


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
    judges = list(panel.judges.counted().order_by("user__username"))  # an excluded judge counts in no number
    kind = panel.task.kind
    result: dict[str, Any] = {"judges": [j.name for j in judges], "kind": kind, "overall": {}, "pairs": []}
    how = SCORERS[kind].judge_agreement  # the kind's scorer says how its answers compare
    if how == "labels":
        result.update(_label_agreement(panel, [j.pk for j in judges]))
    elif how == "partition":
        result.update(_clustering_agreement(panel, [j.pk for j in judges]))
    else:
        result.update(_numeric_agreement(panel, judges, level=how))
    return result


def _label_agreement(panel: LLMJudgePanel, ids: list[int]) -> dict[str, Any]:
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
    answers = judge_answers(panel)
    aris = [metrics.ari_mean.explain([by[j] for j in ids if j in by]) for by in answers.values()]
    values = [v for v, _ in aris if v is not None]
    mean = (sum(values) / len(values), None) if values else (None, "n/a: no item answered by two judges")
    return {"units": len(answers), "overall": {"mean_pairwise_ari": _value(mean)}}


def _numeric_agreement(panel: LLMJudgePanel, judges: list[Annotator], level: str) -> dict[str, Any]:
    """Correlations and α over units (documents, candidates, axes), overall and for every pair of judges."""
    matrix, units = unit_matrix(panel, [j.pk for j in judges])
    if not units:
        return {"units": 0, "overall": {"pearson_mean": _value((None, "n/a: no answers yet"))}}
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
