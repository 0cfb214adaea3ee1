"""What a human–model comparison holds: its entries, each human's subsets, the reports still pending.

The types that :func:`compare.build` fills and every contributor appends to: imported results
(``compare.py``), this project's humans and LLM annotators, and models run here (``project.py``). They sit
apart from both so that the contributors need not import the module that calls them.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from measures import metrics as m
from measures.results.subset_scores import HUME_TASK_KINDS, SubsetKey, SubsetScore
from tasks_app.core.kinds import KINDS

PROJECT_HUMANS = "Humans (this project)"

# MTEB task-name endings → the kind columns of Table 1 (MTEB names its tasks this way).
_SUFFIX_KINDS = (("PairClassification", "PairClassification"), ("Classification", "Classification"),
                 ("Clustering", "Clustering"), ("Reranking", "Reranking"), ("Retrieval", "Retrieval"),
                 ("BitextMining", "BitextMining"), ("Summarization", "Summarization"))
_CORRELATION = re.compile(r"spearman|pearson|kendall", re.IGNORECASE)


@dataclass(frozen=True)
class HumanSubset:
    """What is known about one human entry on one subset: its CI and its agreement."""

    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    n_items: int | None = None
    n_annotators: int | None = None
    agreement_metric: str | None = None
    agreement: float | None = None
    band: str | None = None
    low_agreement: bool = False
    source: str = ""  # e.g. the project task the subset comes from


@dataclass(frozen=True)
class PendingReport:
    """A mapped project task with answers but no stored report yet, and the state of its report job."""

    task_id: int
    task: str
    status: str | None = None  # None: never asked for
    stage: str = ""
    progress: int = 0
    error: str = ""

    @classmethod
    def of(cls, task: Any, report: Any | None) -> PendingReport:
        """From a Task and its agreement Report row (or None)."""
        if report is None:
            return cls(task.pk, task.name)
        return cls(task.pk, task.name, report.status, report.stage, report.progress, report.error)

    @property
    def in_progress(self) -> bool:
        return self.status in (None, "queued", "running")

    @property
    def origin(self) -> str:
        if self.status == "failed":
            return f"no stored report: its run failed ({self.error})"
        return "no stored report yet: being computed"


@dataclass(frozen=True)
class Entry:
    """One row of the comparison: a model revision, a human entry or an LLM annotator."""

    name: str
    agent: str  # model / human / llm (the pure layer's ENTRY_AGENTS)
    origin: str  # "imported" or "this project"
    revision: str = ""
    revision_id: int | None = None
    is_current: bool = True


@dataclass
class Comparison:
    """Everything the views, exports and CLI need; the math itself is in table1.py and its siblings."""

    scores: list[SubsetScore]
    entries: dict[str, Entry]
    humans: dict[str, dict[SubsetKey, HumanSubset]]
    kinds: dict[str, str]
    mappings: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pending: list[PendingReport] = field(default_factory=list)  # project tasks whose report is not stored yet

    def names(self, agent: str) -> list[str]:
        return sorted(name for name, entry in self.entries.items() if entry.agent == agent)

    def default_human(self, languages: Collection[str] | None = None) -> str | None:
        """The human entry with scores on the most subsets (of `languages`, when given), this project's humans on
        a tie: the default comparison is a row that ranks, and its win rates count many subsets (issue 34 item 6:
        the demo's own report gives this project's humans one subset no imported model has, and defaulting to
        them left the leaderboard without a ranked human). The others stay one click away."""
        humans = self.names("human")
        if not humans:
            return None
        counts = Counter(score.name for score in self.scores
                         if score.agent == "human" and (languages is None or score.language in languages))
        return max(humans, key=lambda name: (counts[name], name == PROJECT_HUMANS))

    def ci(self, human: str) -> dict[SubsetKey, tuple[float, float]]:
        return {key: info.ci for key, info in self.humans.get(human, {}).items() if info.ci}

    def for_languages(self, languages: Collection[str]) -> list[SubsetScore]:
        return [score for score in self.scores if score.language in languages]


def kind_of_task(task: str, project_kind: str | None = None) -> str:
    """Table 1 column kind of an MTEB task: HUME's table, the MTEB name's ending, the mapped task, else Other."""
    if task in HUME_TASK_KINDS:
        return HUME_TASK_KINDS[task]
    for suffix, kind in _SUFFIX_KINDS:
        if task.endswith(suffix):
            return kind
    if re.search(r"STS|SICK", task):
        return "STS"
    return KINDS[project_kind].mteb_type if project_kind in KINDS else "Other"


def agreement_family(metric: str | None) -> m.Family:
    return "correlation" if metric and _CORRELATION.search(metric) else "chance"
