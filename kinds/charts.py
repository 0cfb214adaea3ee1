"""The numbers behind a report's charts, taken from a kind's scorer when the report is built: the annotator
scores with their intervals here, each kind's own charts from its scorer (`charts`, `annotator_interval` in
kinds/<name>/scorer.py and the shared bases), with the helpers below.

Why at build time: the charts need item-level answers (a confusion matrix, rating pairs), which the stored
report does not keep; computing them here, from the matrices the scorer already holds, keeps the page
from reading every answer again and keeps metric code out of views. Bounded in size: at most
`MAX_POINTS` points per scatter (a seeded sample, the total is given). Pure: no Django.

Per-annotator 95% CIs use the rule the kind's human score uses for one annotator (HUME Table 8): Wilson
for accuracy (n = items), and for clustering and reranking the Wilson interval of the score with N = texts
or queries; Fisher z for correlations; a seeded bootstrap over queries for nDCG.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from measures import metrics as m

MAX_POINTS = 2000
SEED = 0


def chart_data(scorer: Any, per_annotator: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    """Every chart's data for one scored task; keys present only where the kind has the chart."""
    return {"annotator_scores": annotator_scores(scorer, per_annotator), **scorer.charts()}


# ---------------------------------------------------------------- per-annotator scores with CIs


def annotator_scores(scorer: Any, per_annotator: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    main = scorer.main()
    rows = []
    for name in scorer.ctx.names:
        score = per_annotator[name].get(main)
        (interval, _), method, n = scorer.annotator_interval(name, score)
        rows.append({"name": name, "agent": scorer.ctx.agents[name], "score": score, "n": n, "ci_method": method,
                     "ci_low": interval[0] if interval else None, "ci_high": interval[1] if interval else None})
    return {"metric": main, "rows": rows}


def wilson_of_score(score: float | None, n: int) -> Any:
    if score is None:
        return None, "undefined: no score"
    return m.wilson_interval.explain(score * n, n)



def sample_indices(total: int) -> np.ndarray:
    """All indices up to MAX_POINTS, else a seeded sample of MAX_POINTS of them, in order."""
    if total <= MAX_POINTS:
        return np.arange(total)
    return np.sort(np.random.default_rng(SEED).choice(total, MAX_POINTS, replace=False))
