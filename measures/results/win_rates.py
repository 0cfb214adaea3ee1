"""Win rates (HUME §4.2, Appendix G): the share of subsets where the human beats the best, median or mean model.

A human *wins* a subset against a baseline only when strictly higher; a tie is not a win.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from measures.results.per_task import per_task
from measures.results.subset_scores import HUME_LANGUAGES, SubsetScore

BASELINES: dict[str, Callable[[Sequence[float]], float]] = {
    "best": max,
    "median": statistics.median,
    "mean": statistics.fmean,
}


def win_rates(
    scores: Iterable[SubsetScore],
    *,
    human: str | None = None,
    against: Collection[str] = ("model",),
    languages: Collection[str] = HUME_LANGUAGES,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Share of subsets where the human beats the best / median / mean model, overall and by group.

    Groups: task kind, language, and scope — a task is ``multilingual`` when any entry reports it
    in more than one of ``languages``, else ``monolingual`` (in HUME: English-only; §4.2).
    Subsets without any model score are left out.
    """
    items = list(scores)
    task_languages: dict[str, set[str]] = defaultdict(set)
    for item in items:
        if item.language in languages:
            task_languages[item.task].add(item.language)
    rows = per_task(items, human=human, against=against, languages=languages, kinds=kinds)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "by_kind": defaultdict(list),
        "by_language": defaultdict(list),
        "by_scope": defaultdict(list),
    }
    compared = [row for row in rows if row["models"]]
    for row in compared:
        groups["by_kind"][row["kind"]].append(row)
        groups["by_language"][row["language"]].append(row)
        scope = "multilingual" if len(task_languages[row["task"]]) > 1 else "monolingual"
        groups["by_scope"][scope].append(row)
    result: dict[str, Any] = {"overall": _rates(compared)}
    for group, members in groups.items():
        result[group] = {label: _rates(members[label]) for label in sorted(members)}
    return result


def _rates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Wins and win rate against each baseline for a group of per-task rows."""
    wins = {
        baseline: sum(
            row["human"] > pick([cell["score"] for cell in row["models"]]) for row in rows
        )
        for baseline, pick in BASELINES.items()
    }
    return {
        "n": len(rows),
        "wins": wins,
        "rate": {baseline: (won / len(rows) if rows else None) for baseline, won in wins.items()},
    }
