"""The HUME human-score protocol per task kind: answers + gold → one JSON-ready report dict.

Pure like `metrics` (no Django): the Celery job loads annotations in one query, shapes them as
`answers[item][annotator] = value` (None = skipped) and `gold[item] = value` (value formats: the
team contract in DESIGN §2), and stores what `score_task` returns.

Why one class per kind: each kind has exactly one definition of its agreement metrics, its
per-annotator scores, its aggregation into "the human" and its confidence interval (DESIGN §3);
everything they share (counts, exclusions, bands, validity flag, sorting) lives in `score_task`.

Scores are on a 0..1 scale (the HUME paper prints them ×100). Only annotators of kind "human"
count toward agreement and the human score unless `include_llm=True`; every annotator, LLM or
human, is scored individually in "annotators".
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from agreement import metrics as m

Item = Hashable
Answers = Mapping[Item, Mapping[str, Any]]
Explained = tuple[float | None, str | None]
Scores = dict[str, float | None]
Report = dict[str, Any]
SpearmanVariance = Literal["bonett_wright", "fisher", "fieller"]

DEFAULT_SCALES: dict[str, tuple[float, float]] = {
    "sts": (0.0, 5.0), "graded_relevance": (0.0, 10.0), "likert": (1.0, 7.0),
}
NO_HUMANS = "n/a: no human annotators"
SCORE_SCALE = "0..1 (the HUME paper prints scores x100)"


@dataclass
class Context:
    """Everything a kind needs, normalised once: item order, annotator pool, task options."""

    kind: str
    answers: Answers
    gold: Mapping[Item, Any]
    items: list[Item]
    names: list[str]
    pool: list[str]
    kinds: dict[str, str]
    labels: Sequence[Hashable]
    scale: tuple[float, float]
    axes: list[str]
    k: int
    threshold: float
    include_llm: bool
    spearman_variance: SpearmanVariance = "bonett_wright"

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


# ---------------------------------------------------------------- categorical kinds


class CategoricalScorer(KindScorer):
    """classification and pairwise: labels encoded once as an items × annotators code matrix, so
    the 100k-item path is numpy throughout (majority vote, counts, disagreement)."""

    ci_method = "wilson"
    main_metric = "accuracy"
    agreement_metrics = ("fleiss_kappa", "krippendorff_alpha", "cohen_kappa_mean", "percent_agreement")
    flag_metrics = (("fleiss_kappa", "chance"),)
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
        return {
            "fleiss_kappa": (fleiss, reason if fleiss is None else self.fleiss_note()),
            "krippendorff_alpha": m.krippendorff_alpha.explain(nominal, "nominal"),
            "cohen_kappa_mean": m.cohen_kappa_mean.explain(self.pool_codes),
            "percent_agreement": m.percent_agreement.explain(self.table),
        }

    def fleiss_note(self) -> str | None:
        """Say so when Fleiss' κ used only the equal-rater-count subset (see metrics.fleiss_rows)."""
        used = m.fleiss_rows(self.table)
        pairable = int((self.table.sum(axis=1) >= 2).sum())
        if not used.any() or used.sum() == pairable:
            return None
        raters = int(self.table[used][0].sum())
        return f"computed on {int(used.sum())} of {pairable} items with {raters} ratings each"

    def _scores(self, predicted: np.ndarray) -> Scores:
        scored = (self.gold_codes >= 0) & (predicted >= 0)
        y_true, y_pred = self.gold_codes[scored], predicted[scored]
        scores = m.label_scores(y_true, y_pred, len(self.categories))
        return {name: scores[key] for name, key in self.gold_metrics.items()}

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.codes[:, self.ctx.names.index(name)])

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        """Majority vote per item (tie → lexicographically first label), accuracy, Wilson CI."""
        vote = m.majority_vote(self.table)
        scored = (self.gold_codes >= 0) & (vote >= 0)
        correct = int((vote[scored] == self.gold_codes[scored]).sum())
        n = int(scored.sum())
        scores = self._scores(vote)
        return Human(scores["accuracy"], m.wilson_interval.explain(correct, n), scores, n)

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


class ClassificationScorer(CategoricalScorer):
    """One label per text; HUME reports accuracy (main), macro F1 and weighted F1."""

    gold_metrics = {"accuracy": "accuracy", "f1_macro": "f1_macro", "f1_weighted": "f1_weighted"}


class PairwiseScorer(CategoricalScorer):
    """"a", "b" or "tie" per pair of candidates; accuracy (main) and macro precision/recall/F1."""

    gold_metrics = {
        "accuracy": "accuracy", "precision": "precision_macro", "recall": "recall_macro", "f1": "f1_macro",
    }


# ---------------------------------------------------------------- clustering


class ClusteringScorer(KindScorer):
    """Free clustering of one set of texts per item: only the partition counts (HUME §3)."""

    main_metric = "v_measure"
    ci_method = "annotator_range"
    agreement_metrics = ("ari_mean",)
    flag_metrics = (("ari_mean", "chance"),)
    gold_metrics = {"v_measure": m.v_measure, "ari": m.adjusted_rand, "ami": m.adjusted_mutual_info}

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.bad: list[dict[str, Any]] = []
        self.valid: dict[Item, dict[str, list[Hashable]]] = {i: self._valid_answers(i) for i in ctx.items}

    def _valid_answers(self, item: Item) -> dict[str, list[Hashable]]:
        """Answers whose length matches the set (gold length, else the first answer's length)."""
        given = {n: list(v) for n in self.ctx.names if (v := self.ctx.value(item, n)) is not None}
        size = len(self.ctx.gold[item]) if self.ctx.has_gold(item) else len(next(iter(given.values()), []))
        for name in [n for n, v in given.items() if len(v) != size]:
            self.bad.append({"item": item, "reason": f"{name}: {len(given.pop(name))} cluster ids for {size} texts"})
        return given

    def _pool_answers(self, item: Item) -> list[list[Hashable]]:
        return [v for n, v in self.valid[item].items() if n in self.ctx.pool]

    def agreement(self) -> dict[str, Explained]:
        pairs = [a for item in self.ctx.items for a in m.ari_pairs(self._pool_answers(item))]
        if not pairs:
            return {"ari_mean": (None, "n/a: no set was clustered by two annotators")}
        return {"ari_mean": (float(np.mean(pairs)), None)}

    def annotator_scores(self, name: str) -> Scores:
        """Mean over the sets this annotator clustered of V-measure, ARI and AMI vs gold."""
        sets = [i for i in self.ctx.items if name in self.valid[i] and self.ctx.has_gold(i)]
        return {key: _mean([fn(self.ctx.gold[i], self.valid[i][name]) for i in sets])
                for key, fn in self.gold_metrics.items()}

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        return _mean_of_annotators(per_annotator, self.main_metric, tuple(self.gold_metrics))

    def disagreement(self) -> Disagreement:
        """Share of text pairs on which two annotators disagree about "same cluster", averaged over
        annotator pairs; with gold: the same share between each annotator and gold, averaged."""
        items, among, with_gold = [], [], []
        for item in self.ctx.items:
            parts = self._pool_answers(item)
            if not parts:
                continue
            pairs = [_pair_disagreement(a, b) for a, b in itertools.combinations(parts, 2)]
            gold = self.ctx.gold[item] if self.ctx.has_gold(item) else None
            items.append(item)
            among.append(float(np.mean(pairs)) if pairs else 0.0)
            with_gold.append(np.nan if gold is None else float(np.mean([_pair_disagreement(p, gold) for p in parts])))
        return Disagreement(items, np.array(among), np.array(with_gold))

    def excluded(self) -> list[dict[str, Any]]:
        return self.bad


def _pair_disagreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Fraction of text pairs that one partition puts together and the other apart."""
    ca, cb = m.partition_codes(a), m.partition_codes(b)
    upper = np.triu_indices(len(ca), k=1)
    if upper[0].size == 0:
        return 0.0
    same_a = (ca[:, None] == ca[None, :])[upper]
    same_b = (cb[:, None] == cb[None, :])[upper]
    return float((same_a != same_b).mean())


# ---------------------------------------------------------------- per-(item, key) numeric kinds


class UnitScorer(KindScorer):
    """Kinds whose answer holds one number per unit: (query, candidate), (item, axis) or the item.

    Units are flattened into one units × annotators matrix (NaN = missing or skipped), which is
    what the pairwise correlations and Krippendorff's α take."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.units = self.make_units()
        self.matrix = np.array([[self.pick(self.ctx.value(i, n), key) for n in ctx.names] for i, key in self.units],
                               dtype=float).reshape(len(self.units), len(ctx.names))
        self.pool_matrix = self.matrix[:, [ctx.names.index(n) for n in ctx.pool]]
        position = {item: idx for idx, item in enumerate(ctx.items)}
        self.unit_item = np.array([position[i] for i, _ in self.units], dtype=np.int64)
        # units are made item by item, so each item's units are one contiguous slice
        self.bounds = np.searchsorted(self.unit_item, np.arange(len(ctx.items) + 1))

    @abstractmethod
    def make_units(self) -> list[tuple[Item, Any]]: ...

    def pick(self, value: Any, key: Any) -> float:
        """The number for one unit out of an answer, NaN when missing or skipped."""
        if value is None:
            return math.nan
        raw = value if key is None else value.get(key)
        return math.nan if raw is None else float(raw)

    def gold_of(self, item: Item, key: Any) -> float:
        return self.pick(self.ctx.gold.get(item), key)

    def disagreement(self) -> Disagreement:
        """Per unit, the standard deviation of ratings and |mean − gold|, both divided by the scale
        width so kinds are comparable; averaged over an item's units."""
        width = (self.ctx.scale[1] - self.ctx.scale[0]) or 1.0
        rated = ~np.isnan(self.pool_matrix).all(axis=1)
        pm = self.pool_matrix[rated]
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)[rated]
        among = np.nanstd(pm, axis=1) / width
        off = np.abs(np.nanmean(pm, axis=1) - gold) / width
        return _per_item(self.ctx.items, self.unit_item[rated], among, off)


def _per_item(items: list[Item], unit_item: np.ndarray, among: np.ndarray, off: np.ndarray) -> Disagreement:
    """Average unit-level disagreement per item; gold part NaN if no unit of the item has gold."""
    present = np.unique(unit_item)
    n = len(items)
    count = np.bincount(unit_item, minlength=n)[present]
    mean_among = np.bincount(unit_item, weights=among, minlength=n)[present] / count
    has = ~np.isnan(off)
    gold_count = np.bincount(unit_item[has], minlength=n)[present]
    gold_sum = np.bincount(unit_item[has], weights=off[has], minlength=n)[present]
    with_gold = np.divide(gold_sum, gold_count, out=np.full(len(present), np.nan), where=gold_count > 0)
    return Disagreement([items[i] for i in present], mean_among, with_gold)


class StsScorer(UnitScorer):
    """STS: mean rating per pair, then Spearman vs gold (HUME main), Fisher z CI."""

    main_metric = "spearman"
    ci_method = "fisher_z_bonett_wright"
    agreement_metrics = ("spearman_mean", "pearson_mean", "krippendorff_alpha")
    flag_metrics = (("spearman_mean", "correlation"),)

    def make_units(self) -> list[tuple[Item, Any]]:
        return [(i, None) for i in self.ctx.items]

    def agreement(self) -> dict[str, Explained]:
        return {"spearman_mean": m.spearman_mean.explain(self.pool_matrix),
                "pearson_mean": m.pearson_mean.explain(self.pool_matrix),
                "krippendorff_alpha": m.krippendorff_alpha.explain(self.pool_matrix, "interval")}

    def _pairs(self, ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gold = np.array([self.gold_of(i, None) for i in self.ctx.items], dtype=float)
        keep = ~np.isnan(ratings) & ~np.isnan(gold)
        return ratings[keep], gold[keep]

    def annotator_scores(self, name: str) -> Scores:
        x, y = self._pairs(self.matrix[:, self.ctx.names.index(name)])
        return {"spearman": m.spearman(x, y), "pearson": m.pearson(x, y)}

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        x, y = self._pairs(_nanmean_rows(self.pool_matrix))
        rho, reason = m.spearman.explain(x, y)
        ci = m.fisher_z_interval.explain(rho, x.size, variance=self.ctx.spearman_variance)
        return Human(rho, ci, {"spearman": rho, "pearson": m.pearson(x, y)}, int(x.size), reason=reason)

    def ci_name(self) -> str:
        return "fisher_z" if self.ctx.spearman_variance == "fisher" else f"fisher_z_{self.ctx.spearman_variance}"


class LikertScorer(UnitScorer):
    """Likert: mean per item and axis; Pearson per axis vs gold (and SAGE's 0.5·(r+1)).

    Agreement keys are flat, one per axis: `krippendorff_alpha_<axis>` (ordinal, value domain =
    the scale's integer steps). The main score `pearson_mean` is the mean of the axes' r; its CI
    is a Fisher z interval around the axes' mean z with one axis's variance 1/(n−3): exact for a
    single axis, conservative for several (it assumes fully dependent axes).
    """

    main_metric = "pearson_mean"
    ci_method = "fisher_z"
    agreement_metrics = ()

    def make_units(self) -> list[tuple[Item, Any]]:
        return [(i, axis) for i in self.ctx.items for axis in self.ctx.axes]

    def agreement_names(self) -> tuple[str, ...]:
        return tuple(f"krippendorff_alpha_{axis}" for axis in self.ctx.axes)

    def flags(self) -> tuple[tuple[str, m.Family], ...]:
        return tuple((name, "chance") for name in self.agreement_names())

    def _axis(self, matrix: np.ndarray, axis: str) -> np.ndarray:
        return matrix[[j for j, (_, a) in enumerate(self.units) if a == axis]]

    def agreement(self) -> dict[str, Explained]:
        low, high = self.ctx.scale
        observed = self.pool_matrix[~np.isnan(self.pool_matrix)]
        domain = np.union1d(np.arange(math.ceil(low), math.floor(high) + 1), observed)
        alpha = m.krippendorff_alpha.explain
        return {f"krippendorff_alpha_{a}": alpha(self._axis(self.pool_matrix, a), "ordinal", domain)
                for a in self.ctx.axes}

    def _scores(self, ratings: np.ndarray) -> tuple[Scores, list[int]]:
        scores: Scores = {}
        sizes = []
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)
        for axis in self.ctx.axes:
            x, y = self._axis(ratings[:, None], axis)[:, 0], self._axis(gold[:, None], axis)[:, 0]
            keep = ~np.isnan(x) & ~np.isnan(y)
            scores[f"pearson_{axis}"] = m.pearson(x[keep], y[keep])
            scores[f"sage_{axis}"] = m.sage_score(scores[f"pearson_{axis}"])
            sizes.append(int(keep.sum()))
        scores["pearson_mean"] = _mean([scores[f"pearson_{a}"] for a in self.ctx.axes])
        scores["sage_mean"] = m.sage_score(scores["pearson_mean"])
        return scores, sizes

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])[0]

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        scores, sizes = self._scores(_nanmean_rows(self.pool_matrix))
        rs = np.array([r for a in self.ctx.axes if (r := scores[f"pearson_{a}"]) is not None])
        centre = float(np.tanh(np.arctanh(np.clip(rs, -1 + 1e-15, 1 - 1e-15)).mean())) if rs.size else None
        ci = m.fisher_z_interval.explain(centre, min(sizes, default=0))
        return Human(scores["pearson_mean"], ci, scores, min(sizes, default=0))


# ---------------------------------------------------------------- query-based kinds


class QueryScorer(UnitScorer):
    """reranking and graded_relevance: one unit per (query, candidate) of the gold dict."""

    def make_units(self) -> list[tuple[Item, Any]]:
        units = []
        for item in self.ctx.items:
            keys = self.candidates(item)
            units.extend((item, key) for key in keys)
        return units

    def candidates(self, item: Item) -> list[Hashable]:
        """Gold's candidates in gold order; without gold, every candidate any annotator judged."""
        if self.ctx.has_gold(item):
            return list(self.ctx.gold[item])
        seen = {k for n in self.ctx.names if (v := self.ctx.value(item, n)) for k in v}
        return sorted(seen, key=str)

    def queries(self, column: np.ndarray) -> dict[Item, tuple[list[float], list[float]]]:
        """(gold, scores) per query with gold and a rating; unrated candidates rank last."""
        out = {}
        floor = self.ctx.scale[0] - 1.0
        for idx, item in enumerate(self.ctx.items):
            rows = np.arange(self.bounds[idx], self.bounds[idx + 1])
            if not self.ctx.has_gold(item) or rows.size == 0 or np.isnan(column[rows]).all():
                continue
            gold = [self.gold_of(item, self.units[r][1]) for r in rows]
            out[item] = ([0.0 if math.isnan(g) else g for g in gold], np.nan_to_num(column[rows], nan=floor).tolist())
        return out

    def no_relevant(self) -> list[Item]:
        gold = self.ctx.gold
        return [i for i in self.ctx.items if self.ctx.has_gold(i) and not any(v and v > 0 for v in gold[i].values())]

    def excluded(self) -> list[dict[str, Any]]:
        return [{"item": i, "reason": "no relevant gold candidate (excluded from ranking metrics)"}
                for i in self.no_relevant()]


class RerankingScorer(QueryScorer):
    """Binary relevance per candidate; per-annotator MAP (sklearn AP of the 0/1 judgments), MRR@k,
    nDCG@k; the human score is the mean over annotators with the annotator range as CI (HUME)."""

    main_metric = "map"
    ci_method = "annotator_range"
    agreement_metrics = ("spearman_mean", "kendall_mean", "cohen_kappa_mean", "fleiss_kappa", "percent_agreement")
    flag_metrics = (("spearman_mean", "correlation"),)

    def pick(self, value: Any, key: Any) -> float:
        """A candidate the annotator left unmarked counts as "not relevant"."""
        return math.nan if value is None else float(value.get(key) or 0)

    def agreement(self) -> dict[str, Explained]:
        codes = np.where(np.isnan(self.pool_matrix), -1, self.pool_matrix).astype(np.int64)
        table = m.count_table(codes, 2)
        return {"spearman_mean": m.spearman_mean.explain(self.pool_matrix),
                "kendall_mean": m.kendall_mean.explain(self.pool_matrix),
                "cohen_kappa_mean": m.cohen_kappa_mean.explain(codes),
                "fleiss_kappa": m.fleiss_kappa.explain(table),
                "percent_agreement": m.percent_agreement.explain(table)}

    def annotator_scores(self, name: str) -> Scores:
        queries = list(self.queries(self.matrix[:, self.ctx.names.index(name)]).values())
        k = self.ctx.k
        return {"map": m.mean_over_queries(m.average_precision, queries)[0],
                f"mrr_at_{k}": m.mean_over_queries(m.reciprocal_rank, queries, k=k)[0],
                f"ndcg_at_{k}": m.mean_over_queries(m.ndcg_at_k, queries, k=k)[0]}

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        k = self.ctx.k
        human = _mean_of_annotators(per_annotator, "map", ("map", f"mrr_at_{k}", f"ndcg_at_{k}"))
        human.extra["n_excluded_queries"] = len(self.no_relevant())
        return human

    def disagreement(self) -> Disagreement:
        """Per candidate 1 − majority share; with gold: share of judgments ≠ gold; per-query mean."""
        rated = ~np.isnan(self.pool_matrix).all(axis=1)
        pm = self.pool_matrix[rated]
        yes, n = np.nansum(pm, axis=1), (~np.isnan(pm)).sum(axis=1)
        among = 1.0 - np.maximum(yes, n - yes) / n
        gold = np.array([self.gold_of(i, key) for i, key in self.units], dtype=float)[rated]
        off = np.where(gold > 0, n - yes, yes) / n
        return _per_item(self.ctx.items, self.unit_item[rated], among, np.where(np.isnan(gold), np.nan, off))


class GradedRelevanceScorer(QueryScorer):
    """Graded scores per document: mean score per document, rank, nDCG@k with gains 2^rel − 1
    (main) and Recall@k at a threshold; CI by a seeded bootstrap over queries."""

    main_metric = "ndcg_at_k"
    ci_method = "bootstrap_bca"
    agreement_metrics = ("spearman_mean", "pearson_mean", "krippendorff_alpha")
    flag_metrics = (("spearman_mean", "correlation"),)

    def agreement(self) -> dict[str, Explained]:
        return {"spearman_mean": m.spearman_mean.explain(self.pool_matrix),
                "pearson_mean": m.pearson_mean.explain(self.pool_matrix),
                "krippendorff_alpha": m.krippendorff_alpha.explain(self.pool_matrix, "interval")}

    def _per_query(self, column: np.ndarray) -> dict[Item, tuple[float | None, float | None]]:
        """(nDCG@k, Recall@k) per query with gold, for one column of scores."""
        k, threshold = self.ctx.k, self.ctx.threshold
        return {item: (m.ndcg_at_k(g, s, k=k), m.recall_at_k(g, s, k=k, threshold=threshold))
                for item, (g, s) in self.queries(column).items()}

    def _scores(self, column: np.ndarray) -> Scores:
        per_query = self._per_query(column).values()
        k = self.ctx.k
        return {f"ndcg_at_{k}": _mean([n for n, _ in per_query]), f"recall_at_{k}": _mean([r for _, r in per_query])}

    def main(self) -> str:
        return f"ndcg_at_{self.ctx.k}"

    def annotator_scores(self, name: str) -> Scores:
        return self._scores(self.matrix[:, self.ctx.names.index(name)])

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        column = _nanmean_rows(self.pool_matrix)
        ndcg = [n for n, _ in self._per_query(column).values() if n is not None]
        scores = self._scores(column)
        return Human(scores[self.main()], m.bootstrap_interval.explain(ndcg), scores, len(ndcg))

    def disagreement(self) -> Disagreement:
        """Among annotators: rating spread over the scale (as for STS). With gold: 1 − nDCG@k of
        the mean ranking, because gold grades need not share the annotators' scale."""
        spread = super().disagreement()
        ndcg = {item: n for item, (n, _) in self._per_query(_nanmean_rows(self.pool_matrix)).items()}
        with_gold = [math.nan if ndcg.get(i) is None else 1.0 - ndcg[i] for i in spread.items]
        return Disagreement(spread.items, spread.among, np.array(with_gold, dtype=float))


# ---------------------------------------------------------------- the report


KINDS: dict[str, type[KindScorer]] = {
    "classification": ClassificationScorer,
    "clustering": ClusteringScorer,
    "reranking": RerankingScorer,
    "graded_relevance": GradedRelevanceScorer,
    "sts": StsScorer,
    "pairwise": PairwiseScorer,
    "likert": LikertScorer,
}


def score_task(
    kind: str,
    answers: Answers,
    gold: Mapping[Item, Any],
    *,
    labels: Sequence[Hashable] | None = None,
    scale: tuple[float, float] | None = None,
    axes: Sequence[str] | None = None,
    annotator_kinds: Mapping[str, str] | None = None,
    include_llm: bool = False,
    k: int = 10,
    relevance_threshold: float = 1.0,
    spearman_variance: SpearmanVariance = "bonett_wright",
) -> Report:
    """Score one task the HUME way and return a JSON-serialisable report (no NaN anywhere).

    `answers[item][annotator]` is the answer (None = skipped) and `gold[item]` the gold value, in
    the formats of DESIGN §2. `scale` defaults per kind (sts 0..5, graded 0..10, likert 1..7);
    `relevance_threshold`: a graded_relevance document with gold ≥ it is relevant for Recall@k
    (default 1, the TREC convention: any positive grade).
    `spearman_variance` picks Var(z) of the STS Fisher z CI: Bonett–Wright by default, "fisher"
    (1/(n−3)) reproduces the CIs printed in HUME's Table 8.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}; expected one of {sorted(KINDS)}")
    names = sorted({n for votes in answers.values() for n in votes}, key=str)
    kinds = {n: (annotator_kinds or {}).get(n, "human") for n in names}
    lo, hi = scale or DEFAULT_SCALES.get(kind, (0.0, 1.0))
    if axes is None and kind == "likert":
        given = [*gold.values(), *(v for votes in answers.values() for v in votes.values())]
        axes = sorted({axis for value in given if value for axis in value})
    ctx = Context(
        kind=kind, answers=answers, gold=gold, items=list(answers), names=names,
        pool=[n for n in names if include_llm or kinds[n] == "human"], kinds=kinds, labels=list(labels or ()),
        scale=(float(lo), float(hi)), axes=list(axes or ()), k=k,
        threshold=float(relevance_threshold),
        include_llm=include_llm, spearman_variance=spearman_variance,
    )
    return _report(KINDS[kind](ctx))


def _report(scorer: KindScorer) -> Report:
    """Assemble the stable report keys around one kind's computations."""
    ctx = scorer.ctx
    agreement = _agreement(scorer)
    per_annotator = {n: scorer.annotator_scores(n) for n in ctx.names}
    human = scorer.human({n: per_annotator[n] for n in ctx.pool}) if ctx.pool else _no_human()
    counts, excluded = _tally(ctx)
    excluded += scorer.excluded()
    return _json_safe({
        "kind": ctx.kind, "score_scale": SCORE_SCALE,
        "n_items": len(ctx.items),
        "n_annotators": len(ctx.pool),
        "n_answers": sum(counts[n][0] for n in ctx.pool),
        "n_skipped": sum(counts[n][1] for n in ctx.pool),
        "n_excluded": len(excluded),
        "agreement": {name: value for name, (value, _) in agreement.items()},
        "agreement_notes": {name: note for name, (_, note) in agreement.items() if note},
        "agreement_bands": _bands(agreement),
        "human": _human_block(scorer, human),
        "annotators": [{"name": n, "kind": ctx.kinds[n], "n_answers": counts[n][0], "n_skipped": counts[n][1],
                        "scores": per_annotator[n]} for n in ctx.names],
        "llm": _llm_block(ctx, scorer, per_annotator),
        "excluded": excluded,
        "flags": _flags(scorer, agreement),
    }) | {"disagreement": _disagreement_rows(scorer.disagreement())}


def _agreement(scorer: KindScorer) -> dict[str, tuple[float | None, str | None]]:
    """Agreement among the pool; "n/a" for every metric when fewer than two annotators count."""
    pool = scorer.ctx.pool
    if len(pool) < 2:
        reason = m.SINGLE_ANNOTATOR if pool else NO_HUMANS
        return {name: (None, reason) for name in scorer.agreement_names()}
    return scorer.agreement()


def _tally(ctx: Context) -> tuple[dict[str, tuple[int, int]], list[dict[str, Any]]]:
    """One pass over the answers: (answers, skips) per annotator — a None value is a skip, an
    absent key means "not assigned" — and the items that cannot be scored, with the reason."""
    answered = dict.fromkeys(ctx.names, 0)
    skipped = dict.fromkeys(ctx.names, 0)
    pool, excluded = set(ctx.pool), []
    for item, votes in ctx.answers.items():
        counted = False
        for name, value in votes.items():
            if value is None:
                skipped[name] += 1
            else:
                answered[name] += 1
                counted = counted or name in pool
        if not counted:
            excluded.append({"item": item, "reason": "no answers (all skipped)"})
        elif ctx.gold.get(item) is None:
            excluded.append({"item": item, "reason": "no gold"})
    excluded.extend({"item": item, "reason": "no answers"} for item in ctx.gold if item not in ctx.answers)
    return {n: (answered[n], skipped[n]) for n in ctx.names}, excluded


def _mean_of_annotators(per_annotator: dict[str, Scores], main: str, keys: tuple[str, ...]) -> Human:
    """HUME's clustering/reranking protocol: mean over annotators, annotator range as CI."""
    scores = {key: _mean([s[key] for s in per_annotator.values()]) for key in keys}
    mains = [s[main] for s in per_annotator.values()]
    return Human(scores[main], m.annotator_range.explain(mains), scores, sum(v is not None for v in mains))


def _no_human() -> Human:
    return Human(None, (None, NO_HUMANS), {}, 0, reason=NO_HUMANS)


def _human_block(scorer: KindScorer, human: Human) -> dict[str, Any]:
    interval, ci_reason = human.ci
    reason = human.reason or (None if human.main_score is not None else "undefined: no scored items")
    return {
        "main_metric": scorer.main(),
        "main_score": human.main_score,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "ci_method": scorer.ci_name(),
        "ci_note": ci_reason,
        "reason": reason,
        "n_items_scored": human.n_items_scored,
        "scores": human.scores,
        **human.extra,
    }


def _llm_block(ctx: Context, scorer: KindScorer, per_annotator: dict[str, Scores]) -> dict[str, Any]:
    """LLM annotators apart (HUME §3.6): their names and mean main score, never in the human's."""
    llms = [n for n in ctx.names if ctx.kinds[n] == "llm"]
    return {"annotators": llms, "included_in_human": ctx.include_llm,
            "main_score_mean": _mean([per_annotator[n].get(scorer.main()) for n in llms])}


def _bands(agreement: dict[str, Explained]) -> dict[str, str]:
    """Band per defined agreement value; percent agreement is not chance-corrected, so no band."""
    bands = {}
    for name, (value, _) in agreement.items():
        if value is not None and name != "percent_agreement":
            band = m.agreement_band(value, _family(name))
            if band:
                bands[name] = band
    return bands


def _family(name: str) -> m.Family:
    return "correlation" if name.split("_")[0] in {"spearman", "kendall", "pearson"} else "chance"


def _flags(scorer: KindScorer, agreement: dict[str, Explained]) -> dict[str, Any]:
    low = [name for name, family in scorer.flags() if m.is_low_agreement(agreement.get(name, (None, None))[0], family)]
    return {"low_agreement": bool(low), "message": m.LOW_AGREEMENT_MESSAGE if low else None, "metrics": low}


def _disagreement_rows(d: Disagreement) -> list[dict[str, Any]]:
    """Most-disagreed items first; ties broken by disagreement with gold, then input order."""
    with_gold = np.where(np.isnan(d.with_gold), -1.0, d.with_gold) if len(d.items) else d.with_gold
    order = np.lexsort((np.arange(len(d.items)), -with_gold, -d.among)) if len(d.items) else []
    among, gold = d.among.tolist(), d.with_gold.tolist()
    return [{"item": d.items[i], "disagreement": among[i], "gold_disagreement": None if gold[i] != gold[i] else gold[i]}
            for i in order]


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    """Row means ignoring NaN; all-NaN rows stay NaN without a RuntimeWarning."""
    counts = (~np.isnan(matrix)).sum(axis=1)
    sums = np.nansum(matrix, axis=1)
    return np.divide(sums, counts, out=np.full(len(matrix), np.nan), where=counts > 0)


def _json_safe(value: Any) -> Any:
    """Numpy scalars → Python, non-finite floats → None: the report goes straight to JSON."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
