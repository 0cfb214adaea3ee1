"""The human score of the clustering kind (HUME protocol; kinds/scorers.py has the base class)."""
from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from kinds.charts import wilson_of_score
from kinds.scorers import (
    Context,
    Disagreement,
    Explained,
    Human,
    Item,
    KindScorer,
    Scores,
    mean_of_annotators,
    mean_or_none,
    pair_disagreement,
)
from measures import metrics as m


class ClusteringScorer(KindScorer):
    """Free clustering of one set of texts per item: only the partition counts (HUME §3)."""

    main_metric = "v_measure"
    ci_method = "annotator_range"
    agreement_metrics = ("ari_mean",)
    flag_metrics = (("ari_mean", "chance"),)
    main_agreement = "ari_mean"
    mteb_score_keys = {"v_measure": "v_measure", "ari": "ari", "ami": "ami"}
    judge_agreement = "partition"
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
        return {key: mean_or_none([fn(self.ctx.gold[i], self.valid[i][name]) for i in sets])
                for key, fn in self.gold_metrics.items()}

    def sets_scored(self, names: Sequence[str]) -> list[Item]:
        """The sets with gold that any of `names` clustered: the items behind the human score."""
        return [i for i in self.ctx.items if self.ctx.has_gold(i) and any(n in self.valid[i] for n in names)]

    def n_texts(self, names: Sequence[str]) -> int:
        """Texts in the sets with gold that any of `names` clustered: HUME's N for clustering."""
        return sum(len(self.ctx.gold[i]) for i in self.sets_scored(names))

    def human(self, per_annotator: dict[str, Scores]) -> Human:
        scored = [n for n, s in per_annotator.items() if s[self.main_metric] is not None]
        return mean_of_annotators(per_annotator, self.main_metric, tuple(self.gold_metrics),
                                   self.n_texts(scored), "texts", len(self.sets_scored(scored)))

    def disagreement(self) -> Disagreement:
        """Share of text pairs on which two annotators disagree about "same cluster", averaged over
        annotator pairs; with gold: the same share between each annotator and gold, averaged."""
        items, among, with_gold = [], [], []
        for item in self.ctx.items:
            parts = self._pool_answers(item)
            if not parts:
                continue
            pairs = [pair_disagreement(a, b) for a, b in itertools.combinations(parts, 2)]
            gold = self.ctx.gold[item] if self.ctx.has_gold(item) else None
            items.append(item)
            among.append(float(np.mean(pairs)) if pairs else 0.0)
            with_gold.append(np.nan if gold is None else float(np.mean([pair_disagreement(p, gold) for p in parts])))
        return Disagreement(items, np.array(among), np.array(with_gold))

    def excluded(self) -> list[dict[str, Any]]:
        return self.bad

    def annotator_interval(self, name: str, score: float | None) -> tuple[Any, str, int]:
        n = self.n_texts([name])
        return wilson_of_score(score, n), "wilson (N = texts)", n

    def clusters_per_set(self) -> dict[str, Any]:
        """How many clusters each annotator (and gold) made per set: the clustering kind's label distribution."""
        per_name = {name: Counter(len(set(answer[name])) for answer in self.valid.values() if name in answer)
                    for name in self.ctx.names}
        per_name["gold"] = Counter(len(set(self.ctx.gold[i])) for i in self.ctx.items if self.ctx.has_gold(i))
        sizes = sorted({size for counts in per_name.values() for size in counts})
        return {"labels": [f"{size} clusters" for size in sizes], "title": "clusters per set",
                "rows": [{"name": name, "counts": [counts.get(size, 0) for size in sizes]}
                         for name, counts in per_name.items()]}

    def charts(self) -> dict[str, Any]:
        return {"distribution": self.clusters_per_set()}

    @classmethod
    def mteb_total_annotations(cls, doc: dict[str, Any], n: int) -> int:
        """N × K: one annotation per text (N counts texts, never sets of texts)."""
        return n * doc["n_annotators"]
