"""Compare humans with embedding models and LLM annotators: the HUME tables, in pure Python.

Input is a flat list of :class:`SubsetScore` (one entry's main score on one task-language subset, on
MTEB's 0–1 scale), whatever its origin: MTEB result files (see :func:`scores_from_rows`), the app's
own human annotations, or LLM annotators. Output is JSON-ready dicts, plus CSV and LaTeX renderers.
No Django, no files: the numbers here are checked against the HUME paper in
``tests/test_leaderboard_math.py``.

Definitions (HUME, El Assadi et al.), and why:

* A *subset* is one (MTEB task, language) pair. Subsets are matched by language, not by
  ``hf_subset``, because result files of different MTEB versions name the same subset differently
  (``en`` vs ``eng``).
* The *overall* score is the unweighted mean of main scores over subsets, restricted to a language
  set (default HUME's five languages: 26 subsets; the French subsets are dropped). An entry that
  lacks some of the ranked subsets gets no overall score and no rank, as on the MTEB leaderboard: a
  mean over fewer, possibly easier, subsets is not comparable.
* Which subsets are ranked (:func:`ranked_subsets`): ``all`` is every subset some model has (HUME's
  Table 1, the MTEB rule); ``shared`` (the pages' default) is the subsets that a group of entries all
  have, the group and its subsets chosen to rank the most scores. When a project adds subsets that no
  imported model has, ``all`` ranks nobody, while ``shared`` still ranks the entries that can be compared.
* A human *wins* a subset against a baseline (best, median or mean model score) only when strictly
  higher; a tie is not a win.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats

from agreement.latex import escape
from agreement.results.mteb_files import ScoreRow
from hume.lib.csv_safety import to_csv

ENTRY_KINDS = ("model", "human", "llm")
TASK_KINDS = ("Classification", "Clustering", "Reranking", "STS")
HUME_LANGUAGES = ("eng-Latn", "ara-Arab", "rus-Cyrl", "dan-Latn", "nob-Latn")

HUME_TASK_KINDS: dict[str, str] = {
    "HUMEEmotionClassification": "Classification",
    "HUMEMultilingualSentimentClassification": "Classification",
    "HUMEToxicConversationsClassification": "Classification",
    "HUMETweetSentimentExtractionClassification": "Classification",
    "HUMEArxivClusteringP2P": "Clustering",
    "HUMERedditClusteringP2P": "Clustering",
    "HUMESIB200ClusteringS2S": "Clustering",
    "HUMEWikiCitiesClustering": "Clustering",
    "HUMECore17InstructionReranking": "Reranking",
    "HUMENews21InstructionReranking": "Reranking",
    "HUMERobust04InstructionReranking": "Reranking",
    "HUMEWikipediaRerankingMultilingual": "Reranking",
    "HUMESICK-R": "STS",
    "HUMESTS12": "STS",
    "HUMESTS22": "STS",
    "HUMESTSBenchmark": "STS",
}

SubsetKey = tuple[str, str]  # (MTEB task name, language)
RANK_OVER = ("shared", "all")  # which subsets the overall score is the mean of: see ranked_subsets
MAX_CANDIDATE_BLOCKS = 512  # intersections of entries' subset sets tried by ranked_subsets


@dataclass(frozen=True)
class SubsetScore:
    """One entry's main score (0–1) on one task-language subset; ``kind`` is model, human or llm."""

    name: str
    kind: str
    task: str
    language: str
    score: float


@dataclass(frozen=True)
class _Index:
    """Scores by entry and subset, with each entry's kind; built once, validated once."""

    scores: dict[str, dict[SubsetKey, float]]
    kinds: dict[str, str]

    def names(self, kinds: Collection[str]) -> list[str]:
        return sorted(name for name, kind in self.kinds.items() if kind in kinds)


# ---------------------------------------------------------------------------------------------
# Inputs


def scores_from_rows(
    rows: Iterable[ScoreRow], *, name_of: Callable[[ScoreRow], str] | None = None
) -> list[SubsetScore]:
    """Turn parsed MTEB rows into subset scores: human reference rows are ``human``, others ``model``.

    Pass rows already narrowed by ``mteb_files.leaderboard_rows`` (one revision, one split).
    A subset listing several languages (bitext tasks) is keyed by the languages joined with ``+``.
    """
    return [
        SubsetScore(
            name=name_of(row) if name_of else _default_name(row),
            kind="human" if row.is_human_reference else "model",
            task=row.mteb_task_name,
            language="+".join(row.languages),
            score=row.main_score,
        )
        for row in rows
    ]


def _default_name(row: ScoreRow) -> str:
    return f"{row.model_name}#{row.annotator_id}" if row.annotator_id else row.model_name


def task_kind(task: str, kinds: Mapping[str, str] | None = None) -> str:
    """Kind of an MTEB task: the caller's mapping first, then the table of the 16 HUME tasks."""
    if kinds and task in kinds:
        return kinds[task]
    if task in HUME_TASK_KINDS:
        return HUME_TASK_KINDS[task]
    raise ValueError(f"unknown task kind for {task!r}; pass kinds={{{task!r}: ...}}")


def short_task_name(task: str) -> str:
    """Display name as in the paper's tables: the ``HUME`` prefix dropped."""
    return task.removeprefix("HUME")


def compact_task_name(task: str) -> str:
    """Narrow display name as in HUME Table 8: also drop a ``Classification`` or ``Reranking`` ending."""
    name = short_task_name(task)
    for suffix in ("Classification", "Reranking"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return name


def _index(scores: Iterable[SubsetScore], languages: Collection[str] | None) -> _Index:
    """Validate and index scores, keeping only subsets in ``languages`` (None keeps all)."""
    table: dict[str, dict[SubsetKey, float]] = defaultdict(dict)
    kinds: dict[str, str] = {}
    for item in scores:
        if item.kind not in ENTRY_KINDS:
            raise ValueError(f"{item.name}: kind {item.kind!r} is not one of {ENTRY_KINDS}")
        if kinds.setdefault(item.name, item.kind) != item.kind:
            raise ValueError(f"{item.name}: given as both {kinds[item.name]} and {item.kind}")
        if not math.isfinite(item.score):
            raise ValueError(f"{item.name}: score for {item.task}/{item.language} is not finite")
        entry = table[item.name]  # every entry gets a row, even with no subset in `languages`
        if languages is not None and item.language not in languages:
            continue
        key = (item.task, item.language)
        if key in entry:
            raise ValueError(f"{item.name}: two scores for {item.task}/{item.language}")
        entry[key] = item.score
    return _Index(scores=dict(table), kinds=kinds)


def _pick_human(index: _Index, human: str | None) -> str:
    """The human entry to compare; may be omitted when there is exactly one."""
    if human is not None:
        if index.kinds.get(human) != "human":
            raise ValueError(f"{human!r} is not a human entry of these scores")
        return human
    humans = index.names(("human",))
    if len(humans) != 1:
        raise ValueError(f"pick the human entry to compare with human=...; found {humans}")
    return humans[0]


def _kind_order(kind: str) -> tuple[int, str]:
    """Task kinds in the paper's order; kinds callers add come after, alphabetically."""
    return (TASK_KINDS.index(kind) if kind in TASK_KINDS else len(TASK_KINDS), kind)


def _subset_order(key: SubsetKey, kinds: Mapping[str, str] | None) -> tuple[Any, ...]:
    """Order subsets as the paper does: by task kind, then task, then language."""
    return (*_kind_order(task_kind(key[0], kinds)), key[0], key[1])


def _column(key: SubsetKey, kinds: Mapping[str, str] | None) -> str:
    return f"{task_kind(key[0], kinds)}/{key[1]}"


def _columns(subsets: Iterable[SubsetKey], kinds: Mapping[str, str] | None) -> list[str]:
    """Table 1 columns in the paper's order: task kinds as listed, languages alphabetically."""
    cells = {(task_kind(task, kinds), language) for task, language in subsets}
    ordered = sorted(cells, key=lambda cell: (*_kind_order(cell[0]), cell[1]))
    return [f"{kind}/{language}" for kind, language in ordered]


# ---------------------------------------------------------------------------------------------
# HUME Table 1: entries × (task kind, language)


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
    index = _index(scores, languages)
    benchmark = set(subsets) if subsets is not None else _benchmark_subsets(index)
    columns = _columns(benchmark, kinds)
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
    index = _index(scores, languages)
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


def _benchmark_subsets(index: _Index) -> set[SubsetKey]:
    """Every subset some model reports (every subset of any entry when there are no models)."""
    names = index.names(("model",)) or sorted(index.scores)
    return {key for name in names for key in index.scores[name]}


def _table1_row(
    name: str,
    index: _Index,
    benchmark: set[SubsetKey],
    columns: Sequence[str],
    kinds: Mapping[str, str] | None,
) -> dict[str, Any]:
    own = {key: value for key, value in index.scores[name].items() if key in benchmark}
    by_column: dict[str, list[float]] = defaultdict(list)
    for key, value in own.items():
        by_column[_column(key, kinds)].append(value)
    complete = len(own) == len(benchmark)
    return {
        "name": name,
        "kind": index.kinds[name],
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
    """Rank of one entry (e.g. the human) among entries of the ``against`` kinds, on overall score."""
    chosen = [item for item in scores if item.name == name or item.kind in against]
    for row in table1(chosen, languages=languages, kinds=kinds):
        if row["name"] == name:
            return row["rank"]
    raise ValueError(f"no scores for {name!r}")


# ---------------------------------------------------------------------------------------------
# Per task: HUME Table 8 and Figure 2


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
    index = _index(scores, languages)
    human = _pick_human(index, human)
    others = [name for name in index.names(against) if name != human]
    rows = []
    for key in sorted(index.scores[human], key=lambda k: _subset_order(k, kinds)):
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


# ---------------------------------------------------------------------------------------------
# Win rates (HUME §4.2, Appendix G)

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


# ---------------------------------------------------------------------------------------------
# Correlation between two entries (HUME §4.4, Table 13)


def entry_scores(
    scores: Iterable[SubsetScore], name: str, *, languages: Collection[str] | None = None
) -> dict[SubsetKey, float]:
    """One entry's scores by (task, language), e.g. to correlate a human with an LLM."""
    return dict(_index(scores, languages).scores.get(name, {}))


def spearman(a: Mapping[Any, float], b: Mapping[Any, float]) -> dict[str, Any]:
    """Spearman ρ and two-sided p over the keys both vectors share (HUME: 19 task-language pairs).

    ρ and p are None when fewer than 3 shared keys or a constant vector make them undefined.
    """
    keys = sorted(set(a) & set(b), key=repr)
    left = [a[key] for key in keys]
    right = [b[key] for key in keys]
    if len(keys) < 3 or len(set(left)) < 2 or len(set(right)) < 2:
        return {"rho": None, "p_value": None, "n": len(keys)}
    result = stats.spearmanr(left, right)
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": len(keys)}


# ---------------------------------------------------------------------------------------------
# Output: JSON, formula-safe CSV, LaTeX

def to_json(rows: Any) -> str:
    """Serialize result rows; NaN is refused rather than written as invalid JSON."""
    return json.dumps(rows, ensure_ascii=False, allow_nan=False, indent=2)


def _fmt(value: float | None, scale: float, digits: int) -> str:
    return "" if value is None else f"{value * scale:.{digits}f}"


def table1_to_csv(
    rows: Sequence[Mapping[str, Any]], *, scale: float = 100.0, digits: int = 1
) -> str:
    """Table 1 as CSV, scores scaled like the paper (×100, one decimal)."""
    columns = list(rows[0]["columns"]) if rows else []
    header = ["rank", "name", "kind", *columns, "overall", "n_subsets"]
    body = [
        [
            row["rank"],
            row["name"],
            row["kind"],
            *(_fmt(row["columns"][column], scale, digits) for column in columns),
            _fmt(row["overall"], scale, digits),
            row["n_subsets"],
        ]
        for row in rows
    ]
    return to_csv(header, body)


def per_task_to_csv(
    rows: Sequence[Mapping[str, Any]], *, scale: float = 100.0, digits: int = 1
) -> str:
    """Table 8 as CSV: one line per subset, with the best model and its outside-CI mark."""
    header = [
        "task",
        "kind",
        "language",
        "human",
        "ci_low",
        "ci_high",
        "human_rank",
        "best_model",
        "best_score",
        "best_outside_ci",
        "best_pct_of_human",
    ]
    body = []
    for row in rows:
        best = row["best_model"] or {}
        low, high = row["ci"] or (None, None)
        body.append(
            [
                short_task_name(row["task"]),
                row["kind"],
                row["language"],
                _fmt(row["human"], scale, digits),
                _fmt(low, scale, digits),
                _fmt(high, scale, digits),
                row["human_rank"],
                best.get("name"),
                _fmt(best.get("score"), scale, digits),
                best.get("outside_ci"),
                _fmt(best.get("pct_of_human"), 1.0, digits),
            ]
        )
    return to_csv(header, body)


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters so model names like ``e5_base`` or ``50%`` typeset as text."""
    return escape(text)


def table1_to_latex(
    rows: Sequence[Mapping[str, Any]],
    *,
    scale: float = 100.0,
    digits: int = 1,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """Table 1 as a LaTeX table (booktabs): bold = best per column, underline = best model."""
    columns = [*(list(rows[0]["columns"]) if rows else []), "overall"]
    cells = {column: [_cell(row, column) for row in rows] for column in columns}
    kinds = [column.split("/")[0] for column in columns[:-1]]
    spans = [(kind, kinds.count(kind)) for kind in dict.fromkeys(kinds)]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(columns) + "}",
        r"\toprule",
        " & ".join(
            [
                "",
                *(rf"\multicolumn{{{n}}}{{c}}{{{latex_escape(kind)}}}" for kind, n in spans),
                "Overall",
            ]
        )
        + r" \\",
        " & ".join(["Model", *(latex_escape(c.split("/")[1][:3]) for c in columns[:-1]), ""])
        + r" \\",
        r"\midrule",
    ]
    for position, row in enumerate(rows):
        values = [_latex_value(cells[column], position, rows, scale, digits) for column in columns]
        lines.append(" & ".join([latex_escape(str(row["name"])), *values]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _cell(row: Mapping[str, Any], column: str) -> float | None:
    return row["overall"] if column == "overall" else row["columns"][column]


def _latex_value(
    column: Sequence[float | None],
    position: int,
    rows: Sequence[Mapping[str, Any]],
    scale: float,
    digits: int,
) -> str:
    value = column[position]
    if value is None:
        return "--"
    text = _fmt(value, scale, digits)
    present = [v for v in column if v is not None]
    models = [
        v for v, row in zip(column, rows, strict=True) if v is not None and row["kind"] == "model"
    ]
    if value == max(present):
        text = rf"\textbf{{{text}}}"
    if rows[position]["kind"] == "model" and models and value == max(models):
        text = rf"\underline{{{text}}}"
    return text
