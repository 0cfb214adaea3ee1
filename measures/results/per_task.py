"""HUME Table 8 and Figure 2's data: per task-language subset, the human score beside the models'."""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from measures.results.subset_scores import (
    HUME_LANGUAGES,
    SubsetKey,
    SubsetScore,
    index_scores,
    pick_human,
    subset_order,
    task_kind,
)


def per_task(
    scores: Iterable[SubsetScore],
    *,
    human: str | None = None,
    ci: Mapping[SubsetKey, tuple[float, float]] | None = None,
    against: Collection[str] = ("model",),
    languages: Collection[str] = HUME_LANGUAGES,
    kinds: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """HUME Table 8 rows: human score and CI, best model, each model marked when outside the CI.

    ``ci`` maps (task, language) to the human's 95% interval (computed in ``measures/metrics``);
    without one, ``outside_ci`` is None. A score equal to a bound is inside. ``pct_of_human`` is
    the model score as a percentage of the human score (None when the human scored ≤ 0).
    """
    index = index_scores(scores, languages)
    human = pick_human(index, human)
    others = [name for name in index.names(against) if name != human]
    rows = []
    for key in sorted(index.scores[human], key=lambda k: subset_order(k, kinds)):
        value = index.scores[human][key]
        interval = ci.get(key) if ci else None
        cells = [
            _model_cell(name, index.scores[name][key], value, interval)
            for name in others
            if key in index.scores[name]
        ]
        models = sorted(cells, key=lambda cell: (-cell["score"], cell["name"]))
        rows.append(
            {
                "task": key[0],
                "kind": task_kind(key[0], kinds),
                "language": key[1],
                "human": value,
                "human_name": human,
                "ci": list(interval) if interval else None,
                "human_rank": 1 + sum(cell["score"] > value for cell in models),
                "n_models": len(models),
                "best_model": models[0] if models else None,
                "models": models,
            }
        )
    return rows


def _model_cell(
    name: str, score: float, human: float, interval: tuple[float, float] | None
) -> dict[str, Any]:
    outside = None if interval is None else bool(score < interval[0] or score > interval[1])
    return {
        "name": name,
        "score": score,
        "outside_ci": outside,
        "pct_of_human": 100.0 * score / human if human > 0 else None,
    }


def figure2(
    scores: Iterable[SubsetScore],
    *,
    human: str | None = None,
    against: Collection[str] = ("model",),
    languages: Collection[str] = HUME_LANGUAGES,
    kinds: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """HUME Figure 2 data: per subset, the human score within the min–max (and median) of models."""
    rows = per_task(scores, human=human, against=against, languages=languages, kinds=kinds)
    return [_model_range(row) for row in rows]


def _model_range(row: Mapping[str, Any]) -> dict[str, Any]:
    values = [cell["score"] for cell in row["models"]]
    return {
        "task": row["task"],
        "kind": row["kind"],
        "language": row["language"],
        "human": row["human"],
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "median": statistics.median(values) if values else None,
        "n_models": len(values),
    }
