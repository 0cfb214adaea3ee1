"""The input of every human-vs-model table: one entry's main score on one task-language subset.

Input is a flat list of :class:`SubsetScore` (one entry's main score on one task-language subset, on
MTEB's 0–1 scale), whatever its origin: MTEB result files (see :func:`scores_from_rows`), the app's
own human annotations, or LLM annotators. The tables are built from it by table1.py (HUME Table 1 and
the ranking), per_task.py (Table 8 and Figure 2's data), win_rates.py (§4.2) and entry_correlation.py
(§4.4); table_formats.py writes them as JSON, CSV and LaTeX. No Django, no files: the numbers are checked
against the HUME paper in ``tests/test_leaderboard_math.py``.

* A *subset* is one (MTEB task, language) pair. Subsets are matched by language, not by
  ``hf_subset``, because result files of different MTEB versions name the same subset differently
  (``en`` vs ``eng``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from measures.results.mteb_files import ScoreRow

ENTRY_AGENTS = ("model", "human", "llm")  # what produced an entry's scores (docs/style.md, "Naming")
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


@dataclass(frozen=True)
class SubsetScore:
    """One entry's main score (0–1) on one task-language subset; ``agent`` is model, human or llm."""

    name: str
    agent: str
    task: str
    language: str
    score: float


@dataclass(frozen=True)
class ScoreIndex:
    """Scores by entry and subset, with each entry's agent; built once, validated once."""

    scores: dict[str, dict[SubsetKey, float]]
    agents: dict[str, str]

    def names(self, agents: Collection[str]) -> list[str]:
        return sorted(name for name, agent in self.agents.items() if agent in agents)



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
            agent="human" if row.is_human_reference else "model",
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


def index_scores(scores: Iterable[SubsetScore], languages: Collection[str] | None) -> ScoreIndex:
    """Validate and index scores, keeping only subsets in ``languages`` (None keeps all)."""
    table: dict[str, dict[SubsetKey, float]] = defaultdict(dict)
    agents: dict[str, str] = {}
    for item in scores:
        if item.agent not in ENTRY_AGENTS:
            raise ValueError(f"{item.name}: agent {item.agent!r} is not one of {ENTRY_AGENTS}")
        if agents.setdefault(item.name, item.agent) != item.agent:
            raise ValueError(f"{item.name}: given as both {agents[item.name]} and {item.agent}")
        if not math.isfinite(item.score):
            raise ValueError(f"{item.name}: score for {item.task}/{item.language} is not finite")
        entry = table[item.name]  # every entry gets a row, even with no subset in `languages`
        if languages is not None and item.language not in languages:
            continue
        key = (item.task, item.language)
        if key in entry:
            raise ValueError(f"{item.name}: two scores for {item.task}/{item.language}")
        entry[key] = item.score
    return ScoreIndex(scores=dict(table), agents=agents)


def pick_human(index: ScoreIndex, human: str | None) -> str:
    """The human entry to compare; may be omitted when there is exactly one."""
    if human is not None:
        if index.agents.get(human) != "human":
            raise ValueError(f"{human!r} is not a human entry of these scores")
        return human
    humans = index.names(("human",))
    if len(humans) != 1:
        raise ValueError(f"pick the human entry to compare with human=...; found {humans}")
    return humans[0]


def kind_order(kind: str) -> tuple[int, str]:
    """Task kinds in the paper's order; kinds callers add come after, alphabetically."""
    return (TASK_KINDS.index(kind) if kind in TASK_KINDS else len(TASK_KINDS), kind)


def subset_order(key: SubsetKey, kinds: Mapping[str, str] | None) -> tuple[Any, ...]:
    """Order subsets as the paper does: by task kind, then task, then language."""
    return (*kind_order(task_kind(key[0], kinds)), key[0], key[1])


def column_of(key: SubsetKey, kinds: Mapping[str, str] | None) -> str:
    return f"{task_kind(key[0], kinds)}/{key[1]}"


def columns_of(subsets: Iterable[SubsetKey], kinds: Mapping[str, str] | None) -> list[str]:
    """Table 1 columns in the paper's order: task kinds as listed, languages alphabetically."""
    cells = {(task_kind(task, kinds), language) for task, language in subsets}
    ordered = sorted(cells, key=lambda cell: (*kind_order(cell[0]), cell[1]))
    return [f"{kind}/{language}" for kind, language in ordered]
