"""HUME Table 1: entries × (task kind, language), the overall score and the rank; which subsets are ranked.

Definitions (HUME, El Assadi et al.), and why:

* The *overall* score is the unweighted mean of main scores over subsets, restricted to a language
  set (default HUME's five languages: 26 subsets; the French subsets are dropped). An entry that
  lacks some of the ranked subsets gets no overall score and no rank, as on the MTEB leaderboard: a
  mean over fewer, possibly easier, subsets is not comparable.
* Which subsets are ranked (:func:`ranked_subsets`): ``all`` is every subset some model has (HUME's
  Table 1, the MTEB rule); ``shared`` (the pages' default) is the subsets that a group of entries all
  have, the group and its subsets chosen to rank the most scores. When a project adds subsets that no
  imported model has, ``all`` ranks nobody, while ``shared`` still ranks the entries that can be compared.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from measures.results.subset_scores import (
    HUME_LANGUAGES,
    ScoreIndex,
    SubsetKey,
    SubsetScore,
    column_of,
    columns_of,
    index_scores,
)

RANK_OVER = ("shared", "all")  # which subsets the overall score is the mean of: see ranked_subsets
MAX_CANDIDATE_BLOCKS = 512  # intersections of entries' subset sets tried by ranked_subsets


def table1(
    scores: Iterable[SubsetScore],
    *,
    languages: Collection[str] = HUME_LANGUAGES,
    kinds: Mapping[str, str] | None = None,
    subsets: Collection[SubsetKey] | None = None,
) -> list[dict[str, Any]]:
    """HUME Table 1 rows, best first: per-column means, overall mean over subsets, rank.

    ``subsets`` is the benchmark (default: every subset any model entry has); entries missing
    one of them keep their column means but get ``overall`` and ``rank`` None.
    """
    index = index_scores(scores, languages)
    benchmark = set(subsets) if subsets is not None else _benchmark_subsets(index)
    columns = columns_of(benchmark, kinds)
    rows = [_table1_row(name, index, benchmark, columns, kinds) for name in sorted(index.scores)]
    _assign_ranks(rows)
    return sorted(rows, key=lambda row: (row["rank"] is None, row["rank"] or 0, row["name"]))


def ranked_subsets(
    scores: Iterable[SubsetScore],
    *,
    rank_over: str = "shared",
    languages: Collection[str] = HUME_LANGUAGES,
) -> set[SubsetKey]:
    """The subsets the overall score is the mean of (pass them to :func:`table1` as ``subsets``).

    ``all``: every subset some model has (every subset of any entry when there are no models), so an
    entry is ranked only with all of them. ``shared``: the set of subsets that every entry of some
    group has, choosing among the intersections of the entries' own sets the one that ranks the most
    scores (entries × subsets), then the most entries, then the most subsets; ties go to the first in
    sorted order, so the choice is the same on every call. Empty when no entry has a score.
    """
    if rank_over not in RANK_OVER:
        raise ValueError(f"rank_over must be one of {RANK_OVER}, not {rank_over!r}")
    index = index_scores(scores, languages)
    if rank_over == "all":
        return _benchmark_subsets(index)
    own = [frozenset(subsets) for subsets in index.scores.values() if subsets]
    best: tuple[int, int, int] = (0, 0, 0)
    chosen: frozenset[SubsetKey] = frozenset()
    for block in sorted(_intersections(set(own)), key=lambda block: sorted(block)):
        n_entries = sum(block <= subsets for subsets in own)
        size = (n_entries * len(block), n_entries, len(block))
        if size > best:
            best, chosen = size, block
    return set(chosen)


def _intersections(sets: set[frozenset[SubsetKey]]) -> set[frozenset[SubsetKey]]:
    """The entries' subset sets and their non-empty intersections (the candidate blocks), up to a cap."""
    found = set(sets)
    frontier = set(sets)
    while frontier and len(found) < MAX_CANDIDATE_BLOCKS:
        new = {a & b for a in frontier for b in sets if a & b} - found
        found |= new
        frontier = new
    return found


def _benchmark_subsets(index: ScoreIndex) -> set[SubsetKey]:
    """Every subset some model reports (every subset of any entry when there are no models)."""
    names = index.names(("model",)) or sorted(index.scores)
    return {key for name in names for key in index.scores[name]}


def _table1_row(
    name: str,
    index: ScoreIndex,
    benchmark: set[SubsetKey],
    columns: Sequence[str],
    kinds: Mapping[str, str] | None,
) -> dict[str, Any]:
    own = {key: value for key, value in index.scores[name].items() if key in benchmark}
    by_column: dict[str, list[float]] = defaultdict(list)
    for key, value in own.items():
        by_column[column_of(key, kinds)].append(value)
    complete = len(own) == len(benchmark)
    return {
        "name": name,
        "agent": index.agents[name],
        "overall": statistics.fmean(own.values()) if complete and own else None,
        "rank": None,
        "n_subsets": len(own),
        "n_subsets_outside": len(index.scores[name]) - len(own),  # the entry's subsets not ranked here
        "complete": complete,
        "columns": {
            column: statistics.fmean(by_column[column]) if by_column[column] else None
            for column in columns
        },
    }


def _assign_ranks(rows: list[dict[str, Any]]) -> None:
    """Competition ranking (1, 2, 2, 4) on overall score; entries without overall stay unranked."""
    ranked = [row for row in rows if row["overall"] is not None]
    for row in ranked:
        row["rank"] = 1 + sum(other["overall"] > row["overall"] for other in ranked)


def overall_rank(
    scores: Iterable[SubsetScore],
    name: str,
    *,
    against: Collection[str] = ("model",),
    languages: Collection[str] = HUME_LANGUAGES,
    kinds: Mapping[str, str] | None = None,
) -> int | None:
    """Rank of one entry (e.g. the human) among entries of the ``against`` agents, on overall score."""
    chosen = [item for item in scores if item.name == name or item.agent in against]
    for row in table1(chosen, languages=languages, kinds=kinds):
        if row["name"] == name:
            return row["rank"]
    raise ValueError(f"no scores for {name!r}")
