"""What the kinds' scorers share: the base class `KindScorer`, the shapes they use, and the categorical kinds'
base (classification and pairwise). Each kind's scorer is kinds/<name>/scorer.py.

Why one class per kind: each kind has exactly one definition of its agreement metrics, its
per-annotator scores, its aggregation into "the human" and its confidence interval (docs/reports.md);
everything they share (counts, exclusions, bands, validity flag, sorting) lives in
agreement/core/scoring.py `score_task`. The kinds with one number per unit (STS, Likert, reranking, graded
relevance) share kinds/rating_scorers.py. A scorer class also declares the agreement value a task is judged
by, the MTEB key of each score and how LLM judges are compared (checked for every kind by
tasks_app/kind_parts.py through agreement/kind_parts.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from measures import annotator_models, gwet, pairwise_kappa
from measures import metrics as m

Item = Hashable
Answers = Mapping[Item, Mapping[str, Any]]
Explained = tuple[float | None, str | None]
Scores = dict[str, float | None]
SpearmanVariance = Literal["fisher", "bonett_wright", "fieller"]
Gains = Literal["linear", "exponential"]
TIE_RULE = "lexicographically first label"
TIE_SEED = 0  # the seed of the random tie-break score: fixed, so a report is reproducible
# How a judge panel's judges are compared (agreement/core/judge_panels.py): as labels (κ, α nominal), as
# partitions (ARI), or as numbers per unit (r, ρ, and α at this level of measurement).
JudgeAgreement = Literal["labels", "partition", "nominal", "interval", "ordinal"]


@dataclass
class Context:
    """Everything a kind needs, normalised once: item order, annotator pool, task options."""

    kind: str
    answers: Answers
    gold: Mapping[Item, Any]
    items: list[Item]
    names: list[str]
    pool: list[str]
    agents: dict[str, str]  # each annotator's agent: human or llm
    labels: Sequence[Hashable]
    scale: tuple[float, float]
    axes: list[str]
    k: int
    threshold: float
    include_llm: bool
    spearman_variance: SpearmanVariance = "fisher"
    gains: Gains = "linear"
    kappa_min_shared: int = pairwise_kappa.MIN_SHARED_DEFAULT  # pairs sharing fewer items: out of κ's mean
    aggregation: str = "majority"  # how the human is combined: measures/annotator_models.py METHODS

    def value(self, item: Item, name: str) -> Any:
        """The annotator's answer, None when skipped or not assigned."""
        return self.answers.get(item, {}).get(name)

    def has_gold(self, item: Item) -> bool:
        """Whether the item can be scored against gold."""
        return self.gold.get(item) is not None


@dataclass
class Human:
    """The aggregated human: main score, its CI, and every vs-gold metric."""

    main_score: float | None
    ci: tuple[m.Interval | None, str | None]
    scores: Scores
    n_items_scored: int
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    ci_method: str | None = None  # when the CI rule depends on the data (one annotator or several)


@dataclass
class Disagreement:
    """Per-item disagreement among annotators and with gold (NaN = not defined → None in JSON)."""

    items: list[Item]
    among: np.ndarray
    with_gold: np.ndarray


class KindScorer(ABC):
    """One task kind's metrics. Subclasses declare names and implement the four computations."""

    main_metric: ClassVar[str]
    ci_method: ClassVar[str]
    agreement_metrics: ClassVar[tuple[str, ...]]
    flag_metrics: ClassVar[tuple[tuple[str, m.Family], ...]]
    # The agreement value the task is judged by (reports' agreement_main); "{axis}": the first axis's.
    main_agreement: ClassVar[str]
    # Report score name -> MTEB key, for the TaskResult export; None keeps the report's names.
    mteb_score_keys: ClassVar[dict[str, str] | None]
    judge_agreement: ClassVar[JudgeAgreement]

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def main(self) -> str:
        """Name of the main metric (a method because some names carry the cut-off k)."""
        return self.main_metric

    def ci_name(self) -> str:
        """How the human CI was computed, as reported in `human.ci_method`."""
        return self.ci_method

    def agreement_names(self) -> tuple[str, ...]:
        """Agreement keys of this kind, also when they are all "n/a" (fewer than 2 annotators)."""
        return self.agreement_metrics

    def flags(self) -> tuple[tuple[str, m.Family], ...]:
        """Agreement values the HUME validity flag looks at, with their threshold family."""
        return self.flag_metrics

    @abstractmethod
    def agreement(self) -> dict[str, Explained]:
        """Agreement among the pool annotators (at least two): name → (value, reason or note)."""

    @abstractmethod
    def annotator_scores(self, name: str) -> Scores:
        """One annotator's answers against gold, every vs-gold metric of the kind."""

    @abstractmethod
    def human(self, per_annotator: dict[str, Scores]) -> Human:
        """The HUME aggregation of the pool (given the pool's own scores) and its CI."""

    @abstractmethod
    def disagreement(self) -> Disagreement:
        """Per answered item: disagreement among the pool, and of the pool with gold (0..1)."""

    def excluded(self) -> list[dict[str, Any]]:
        """Kind-specific exclusions on top of the common ones (no gold, no answers)."""
        return []

    def agreement_counts(self) -> dict[str, int]:
        """Counts behind the agreement values (e.g. reranking's queries left out), after `agreement`."""
        return {}

    def agreement_pairs(self) -> dict[str, Any]:
        """Per-pair agreement behind a mean (Cohen's κ per annotator pair), after `agreement`."""
        return getattr(self, "pairs", {})

    def agreement_intervals(self) -> dict[str, Any]:
        """Standard error and 95% CI of the agreement values that have one (Gwet's AC1/AC2), after `agreement`."""
        return getattr(self, "intervals", {})

    def model_triples(self) -> list[annotator_models.Triple] | None:
        """The pool's answers as (unit, annotator, label) for the annotator models; None: the kind has no labels."""
        return None

    def model_gold(self) -> Mapping[Item, Any]:
        """Gold per unit of `model_triples`."""
        return self.ctx.gold

    def gwet_entry(self, name: str, table: np.ndarray, weight_matrix: np.ndarray | None = None,
                   weighting: gwet.Weighting = "identity") -> Explained:
        """Gwet's AC1/AC2 of a count table as an agreement entry; its SE and CI go to `agreement_intervals`."""
        try:
            result = gwet.gwet_ac(table, weight_matrix, weighting=weighting)
        except m.Undefined as exc:
            return None, str(exc)
        self.intervals = {**self.agreement_intervals(), name: result.as_dict()}
        return result.coefficient, None

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        """(CI explained, its method, n) of one annotator's main score, by the rule the kind's human score uses
        for one annotator (HUME Table 8); the chart of annotator scores shows it."""
        return (None, "no interval for this kind"), "", 0

    def charts(self) -> dict[str, Any]:
        """The kind's chart data beyond the annotator scores (kinds/charts.py), from the matrices it holds."""
        return {}

    @classmethod
    def mteb_agreement(cls, doc: dict[str, Any], counts: dict[str, Any], headline: dict[str, Any]) -> dict[str, Any]:
        """The agreement block of the kind's MTEB TaskResult subset (agreement/core/mteb_export.py), from a stored
        report: by default the headline metric and its value, then N, K and the total (HUME Table 8)."""
        return {**headline, **counts}

    @classmethod
    def mteb_total_annotations(cls, doc: dict[str, Any], n: int) -> int:
        """The total of annotations as HUME Table 8 counts it for the kind (default: the answers)."""
        return doc["n_answers"]


# ---------------------------------------------------------------- categorical kinds


class CategoricalScorer(KindScorer):
    """classification and pairwise: labels encoded once as an items × annotators code matrix, so
    the 100k-item path is numpy throughout (majority vote, counts, disagreement)."""

    ci_method = "wilson"
    main_metric = "accuracy"
    agreement_metrics = ("fleiss_kappa", "krippendorff_alpha", "cohen_kappa_mean", "percent_agreement", "gwet_ac1")
    flag_metrics = (("fleiss_kappa", "chance"),)
    main_agreement = "fleiss_kappa"
    judge_agreement = "labels"
    gold_metrics: ClassVar[dict[str, str]]  # report name -> key of metrics.label_scores

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        names = ctx.names
        flat = [votes.get(n) for votes in ctx.answers.values() for n in names]
        gold_values = [ctx.gold.get(item) for item in ctx.items]
        codes, self.categories = m.encode_labels(flat, [*ctx.labels, *gold_values])
        self.codes = codes.reshape(len(ctx.items), len(names))
        index = {c: i for i, c in enumerate(self.categories)}
        self.gold_codes = np.array([-1 if g is None else index[g] for g in gold_values], dtype=np.int64)
        self.pool_codes = self.codes[:, [ctx.names.index(n) for n in ctx.pool]]
        self.table = m.count_table(self.pool_codes, len(self.categories))

    def agreement(self) -> dict[str, Explained]:
        nominal = np.where(self.pool_codes >= 0, self.pool_codes, np.nan)
        fleiss, reason = m.fleiss_kappa.explain(self.table)
        kappa, self.pairs = pairwise_kappa.summary(self.pool_codes, self.ctx.pool, self.ctx.kappa_min_shared)
        percent, percent_reason = m.percent_agreement.explain(self.table)
        return {
            "fleiss_kappa": (fleiss, reason if fleiss is None else fleiss_note(self.table)),
            "krippendorff_alpha": m.krippendorff_alpha.explain(nominal, "nominal"),
            "cohen_kappa_mean": kappa,
            "percent_agreement": (percent, percent_reason or pairable_note(self.table)),
            "gwet_ac1": self.gwet_entry("gwet_ac1", self.table),
        }

    def model_triples(self) -> list[annotator_models.Triple]:
        return annotator_models.triples_of_items(self.ctx.answers, self.ctx.pool)

    def _scores(self, predicted: np.ndarray) -> Scores:
        scored = (self.gold_codes >= 0) & (predicted >= 0)
        y_true, y_pred = self.gold_codes[scored], predicted[scored]
        scores = m.label_scores(y_true, y_pred, len(self.categories))
        return {name: scores[key] for name, key in self.gold_metrics.items()}

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.codes[:, self.ctx.names.index(name)])

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        """Majority vote per item (tie → lexicographically first label), accuracy, Wilson CI.

        A fixed tie rule can favour gold (HUME used two annotators, so ties are common): the report
        names the rule, gives the share of tied items, and the accuracy with ties broken at random
        (seeded), so a reader sees how much the rule moves the human row.
        """
        if self.ctx.aggregation != "majority":
            return self._modelled_human()
        vote = m.majority_vote(self.table)
        scored = (self.gold_codes >= 0) & (vote >= 0)
        correct = int((vote[scored] == self.gold_codes[scored]).sum())
        n = int(scored.sum())
        scores = self._scores(vote)
        n_tied = int((m.tied_items(self.table) & scored).sum())
        random_vote = m.majority_vote(self.table, np.random.default_rng(TIE_SEED))
        extra = {"combination": f"majority vote per item, ties to the {TIE_RULE}", "aggregation": "majority",
                 "tie_rule": TIE_RULE, "n_tied_items": n_tied, "tied_share": n_tied / n if n else None,
                 "main_score_random_ties": self._scores(random_vote)["accuracy"], "tie_seed": TIE_SEED,
                 "n": n, "n_unit": "items"}
        return Human(scores["accuracy"], m.wilson_interval.explain(correct, n), scores, n, extra=extra)

    def _modelled_human(self) -> Human:
        """The human as aggregated by an annotator model (Dawid-Skene, GLAD, MACE, …): its consensus label
        per item, scored against gold like the majority vote, with the Wilson CI."""
        method = self.ctx.aggregation
        consensus = annotator_models.fit(method, self.model_triples()).consensus
        index = {c: i for i, c in enumerate(self.categories)}
        vote = np.array([index.get(consensus.get(item), -1) for item in self.ctx.items], dtype=np.int64)
        scored = (self.gold_codes >= 0) & (vote >= 0)
        correct = int((vote[scored] == self.gold_codes[scored]).sum())
        n = int(scored.sum())
        scores = self._scores(vote)
        extra = {"combination": f"{method} consensus per item ({annotator_models.CROWD_KIT})",
                 "aggregation": method, "n": n, "n_unit": "items"}
        return Human(scores["accuracy"], m.wilson_interval.explain(correct, n), scores, n, extra=extra)

    def disagreement(self) -> Disagreement:
        """1 − share of the majority label; with gold: 1 − share of the gold label."""
        counts = self.table.sum(axis=1)
        answered = np.flatnonzero(counts > 0)
        if answered.size == 0:
            return Disagreement([], np.zeros(0), np.zeros(0))
        t, c, g = self.table[answered], counts[answered], self.gold_codes[answered]
        among = 1.0 - t.max(axis=1) / c
        gold_share = t[np.arange(len(answered)), np.maximum(g, 0)] / c
        with_gold = np.where(g >= 0, 1.0 - gold_share, np.nan)
        return Disagreement([self.ctx.items[i] for i in answered], among, with_gold)

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        column = self.ctx.names.index(name)
        predicted = self.codes[:, column]
        scored = (self.gold_codes >= 0) & (predicted >= 0)
        correct = int((predicted[scored] == self.gold_codes[scored]).sum())
        return m.wilson_interval.explain(correct, int(scored.sum())), "wilson", int(scored.sum())

    def charts(self) -> dict[str, Any]:
        return self.label_charts()

    def label_charts(self) -> dict[str, Any]:
        """Confusion matrix of the human majority vote (the report's tie rule) against gold, and how often each
        annotator (and gold) gave each label."""
        labels = [str(c) for c in self.categories]
        vote = m.majority_vote(self.table)
        scored = (self.gold_codes >= 0) & (vote >= 0)
        size = len(labels)
        matrix = np.bincount(self.gold_codes[scored] * size + vote[scored], minlength=size * size).reshape(size, size)
        rows = [{"name": name, "counts": np.bincount(column[column >= 0], minlength=size).tolist()}
                for name, column in zip(self.ctx.names, self.codes.T, strict=True)]
        gold = self.gold_codes[self.gold_codes >= 0]
        rows.append({"name": "gold", "counts": np.bincount(gold, minlength=size).tolist()})
        return {"confusion": {"labels": labels, "matrix": matrix.tolist(), "rows": "gold", "columns": "majority vote"},
                "distribution": {"labels": labels, "rows": rows}}

    @classmethod
    def mteb_agreement(cls, doc: dict[str, Any], counts: dict[str, Any], headline: dict[str, Any]) -> dict[str, Any]:
        """The label kinds add the band's name and the mean pairwise κ and percent agreement."""
        block = dict(headline)
        band = doc.get("agreement_bands", {}).get(doc.get("agreement_main") or "")
        if band:
            block["interpretation"] = band.capitalize()
        agreement = doc["agreement"]
        return {**block, **counts, "mean_pairwise_kappa": agreement.get("cohen_kappa_mean"),
                "mean_percentage_agreement": agreement.get("percent_agreement")}


def fleiss_note(table: np.ndarray, unit: str = "items") -> str | None:
    """Which subset Fleiss' κ was computed on (the equal-answer-count items, see metrics.fleiss_rows),
    when it is not every answered item."""
    used = m.fleiss_rows(table)
    counts = table.sum(axis=1)
    answered, pairable = int((counts >= 1).sum()), int((counts >= 2).sum())
    if not used.any() or used.sum() == answered:
        return None
    raters = int(counts[used][0])
    return (f"computed on the {int(used.sum())} {unit} with {raters} answers each "
            f"(of {pairable} answered by two or more annotators, {answered} answered)")


def pairable_note(table: np.ndarray, unit: str = "items") -> str | None:
    """Say so when some answered items had a single answer, so agreement could not look at them."""
    counts = table.sum(axis=1)
    answered, pairable = int((counts >= 1).sum()), int((counts >= 2).sum())
    if pairable == answered or not pairable:
        return None
    return f"computed on the {pairable} {unit} answered by two or more annotators (of {answered} answered)"


# ---------------------------------------------------------------- clustering


def pair_disagreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Fraction of text pairs that one partition puts together and the other apart."""
    ca, cb = m.partition_codes(a), m.partition_codes(b)
    upper = np.triu_indices(len(ca), k=1)
    if upper[0].size == 0:
        return 0.0
    same_a = (ca[:, None] == ca[None, :])[upper]
    same_b = (cb[:, None] == cb[None, :])[upper]
    return float((same_a != same_b).mean())


def mean_of_annotators(per_annotator: dict[str, Scores], main: str, keys: tuple[str, ...], n: int,
                        unit: str, n_items: int) -> Human:
    """HUME's clustering/reranking protocol: mean over annotators; CI the annotator range with two or
    more annotators, and with one the Wilson interval of the score with N = texts or queries (HUME
    Table 8, e.g. SIB200 ara: 76.0 [58.4, 87.8], N = 30) — a one-annotator range has zero width.
    `n_items` is the sets or queries scored (the report's `n_items_scored`, as for every kind); the
    annotators averaged are counted apart, in `n_annotators_scored`."""
    scores = {key: mean_or_none([s[key] for s in per_annotator.values()]) for key in keys}
    mains = [v for s in per_annotator.values() if (v := s[main]) is not None]
    extra: dict[str, Any] = {"combination": "mean over annotators", "n": n, "n_unit": unit,
                             "n_annotators_scored": len(mains)}
    if len(mains) == 1:
        ci = m.wilson_interval.explain(mains[0] * n, n)
        return Human(scores[main], ci, scores, n_items, extra=extra, ci_method=f"wilson (one annotator, N = {unit})")
    return Human(scores[main], m.annotator_range.explain(mains), scores, n_items, extra=extra,
                 ci_method="annotator_range")


def mean_or_none(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None
