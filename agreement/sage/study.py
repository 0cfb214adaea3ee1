"""Run a SAGE study for similarity functions: perturb once, score every category, build Table 1 and 2-6.

A scorer is a name and a callable `similarity(a_texts, b_texts) -> array` giving one similarity per pair
(a_texts[i], b_texts[i]), larger = more similar; optionally `embed(texts) -> (n, d) array` for embedding
models, used for the all-pairs matrices of clustering and retrieval (cosine), or `cross(a, b) -> |a| × |b|
array` where a library computes all pairs faster than pair by pair (rapidfuzz's cdist). The model registry
(`agreement.model_runs`) provides both for every registered model; `agreement.sage.baselines` wraps the registry's
classical ones. The perturbed texts depend only on the study and the seed, never on the scorer, so every
scorer sees the very same texts and the same seed gives the same table.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from agreement.sage.datasets import Study
from measures.sage import categories as cat
from measures.sage import perturb
from measures.sage.retrieval import ndcg_at_10, rank

Similarity = Callable[[Sequence[str], Sequence[str]], np.ndarray]
Embed = Callable[[Sequence[str]], np.ndarray]
GROUPS = ("embedding", "classical", "human")


@dataclass(frozen=True)
class Scorer:
    name: str
    similarity: Similarity
    embed: Embed | None = None
    group: str = "classical"
    cross: Callable[[Sequence[str], Sequence[str]], np.ndarray] | None = None
    categories: tuple[str, ...] = cat.CATEGORIES  # a human row covers only the categories people rated

    def pairs(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Similarities of the pairs, checked: one finite number per pair."""
        values = np.asarray(self.similarity(list(a), list(b)), dtype=float).reshape(-1)
        if values.shape != (len(a),) or not np.all(np.isfinite(values)):
            raise ValueError(f"scorer {self.name!r} returned {values.shape[0]} values (or non-finite ones) "
                             f"for {len(a)} pairs")
        return values

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """The |a| × |b| similarity matrix: cosine of the embeddings if there are any, else every pair."""
        if self.embed is not None:
            left, right = _unit(self.embed(list(a))), _unit(self.embed(list(b)))
            return left @ right.T
        if self.cross is not None:
            return np.asarray(self.cross(list(a), list(b)), dtype=float)
        grid_a = [x for x in a for _ in b]
        grid_b = [y for _ in a for y in b]
        return self.pairs(grid_a, grid_b).reshape(len(a), len(b))

    def square(self, texts: Sequence[str]) -> np.ndarray:
        """The symmetric n × n matrix of a clustering set (each unordered pair asked once)."""
        if self.embed is not None or self.cross is not None:
            return self.matrix(texts, texts)
        index = list(combinations(range(len(texts)), 2))
        values = self.pairs([texts[i] for i, _ in index], [texts[j] for _, j in index])
        out = np.ones((len(texts), len(texts)))
        for (i, j), v in zip(index, values, strict=True):
            out[i, j] = out[j, i] = v
        return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


# ---------------------------------------------------------------------------------------------
# Perturbed texts, once per study

def perturb_all(docs: Sequence[tuple[str, str]], variants: Sequence[perturb.Variant], seed: int,
                scope: str) -> list[list[str]]:
    """texts[i][v]: document i under variant v, each with its own seed derived from (seed, scope, id, name)."""
    return [[v.apply(text, perturb.derive_seed(seed, scope, ident, v.name)) for v in variants]
            for ident, text in docs]


@dataclass
class Perturbed:
    robustness: dict[str, list[list[str]]]
    insertion: dict[str, list[list[str]]]
    removal: dict[str, list[list[str]]]
    retrieval: dict[str, list[dict[str, str]]]


def perturb_study(study: Study, seed: int) -> Perturbed:
    robust = {name: perturb_all([(d["id"], d["text"]) for d in docs], (*perturb.SUPERFICIAL, *perturb.SEMANTIC),
                                seed, f"robustness/{name}") for name, docs in study.robustness.items()}
    sens = {name: [(d["id"], d["text"]) for d in docs] for name, docs in study.sensitivity.items()}
    insertion = {n: perturb_all(d, perturb.SENSITIVITY_INSERTION, seed, f"sensitivity/{n}") for n, d in sens.items()}
    removal = {n: perturb_all(d, perturb.SENSITIVITY_REMOVAL, seed, f"sensitivity/{n}") for n, d in sens.items()}
    retrieval = {}
    for name, collection in study.retrieval.items():
        ids = list(collection.corpus)
        texts = perturb_all([(i, collection.corpus[i]) for i in ids], perturb.RETRIEVAL, seed, f"retrieval/{name}")
        retrieval[name] = [{ids[i]: texts[i][v] for i in range(len(ids))} for v in range(len(perturb.RETRIEVAL))]
    return Perturbed(robust, insertion, removal, retrieval)


# ---------------------------------------------------------------------------------------------
# One category at a time, for one scorer

def _against_originals(scorer: Scorer, originals: Sequence[str], perturbed: list[list[str]]) -> np.ndarray:
    """sim(original_i, perturbed_i,v) as an (n, m) array, in one call to the scorer."""
    m = len(perturbed[0])
    values = scorer.pairs([o for o in originals for _ in range(m)], [t for row in perturbed for t in row])
    return values.reshape(len(originals), m)


def score_human_preference(scorer: Scorer, study: Study) -> tuple[float | None, dict[str, Any]]:
    detail: dict[str, Any] = {}
    f1 = None
    decided = [c for c in study.comparisons if c["preferred"] != "tie"]
    if decided:
        sources = [c["source"] for c in decided]
        sim_a = scorer.pairs(sources, [c["summary_a"] for c in decided])
        sim_b = scorer.pairs(sources, [c["summary_b"] for c in decided])
        pairwise = cat.pairwise_preference(sim_a, sim_b, [c["preferred"] == "a" for c in decided])
        detail["pairwise"] = {**pairwise, "n": len(decided), "n_ties_excluded": len(study.comparisons) - len(decided)}
        f1 = pairwise["f1"]
    axes: dict[str, float | None] = {}
    if study.ratings:
        sims = scorer.pairs([r["source"] for r in study.ratings], [r["summary"] for r in study.ratings])
        for axis in sorted({a for r in study.ratings for a in r["ratings"]}):
            rated = [(s, r["ratings"][axis]) for s, r in zip(sims, study.ratings, strict=True) if axis in r["ratings"]]
            axes[axis] = cat.mapped_pearson([s for s, _ in rated], [v for _, v in rated])
        detail["scoring"] = axes
    if not decided and not study.ratings:
        return None, detail
    return cat.human_preference(f1, axes), detail


def score_robustness(scorer: Scorer, study: Study, perturbed: Perturbed) -> tuple[float | None, dict[str, Any]]:
    per_dataset = {}
    k = len(perturb.SUPERFICIAL)
    for name, docs in study.robustness.items():
        originals = [d["text"] for d in docs]
        sims = _against_originals(scorer, originals, perturbed.robustness[name])
        summary = scorer.pairs(originals, [d["summary"] for d in docs])
        per_dataset[name] = cat.robustness(summary, sims[:, :k], sims[:, k:])
    return cat.mean_over_datasets({n: d["score"] for n, d in per_dataset.items()}), per_dataset


def score_sensitivity(scorer: Scorer, study: Study, perturbed: Perturbed) -> tuple[float | None, dict[str, Any]]:
    detail: dict[str, dict[str, float]] = {"insertion": {}, "removal": {}}
    for kind, variants, texts in (("insertion", perturb.SENSITIVITY_INSERTION, perturbed.insertion),
                                  ("removal", perturb.SENSITIVITY_REMOVAL, perturbed.removal)):
        for name, docs in study.sensitivity.items():
            observed = _against_originals(scorer, [d["text"] for d in docs], texts[name])
            detail[kind][name] = cat.sensitivity(observed, [v.proportion for v in variants])
    return cat.sensitivity_category(detail["insertion"], detail["removal"]), detail


def score_clustering(scorer: Scorer, study: Study) -> tuple[float | None, dict[str, float]]:
    per_dataset = {name: float(np.mean([cat.clustering_v_measure(scorer.square(s["texts"]), s["labels"])
                                        for s in sets]))
                   for name, sets in study.clustering.items()}
    return cat.mean_over_datasets(per_dataset), per_dataset


def score_retrieval(scorer: Scorer, study: Study, perturbed: Perturbed) -> tuple[float | None, dict[str, Any]]:
    per_dataset = {}
    for name, collection in study.retrieval.items():
        qids = sorted(collection.qrels)
        qtexts = [collection.queries[q] for q in qids]
        ids = list(collection.corpus)
        original = ndcg_at_10(collection.qrels, rank(qids, qtexts, ids, [collection.corpus[i] for i in ids],
                                                     scorer.matrix))
        perturbed_ndcg = {v.name: ndcg_at_10(collection.qrels, rank(qids, qtexts, ids, [corpus[i] for i in ids],
                                                                    scorer.matrix))
                          for v, corpus in zip(perturb.RETRIEVAL, perturbed.retrieval[name], strict=True)}
        per_dataset[name] = {"ndcg_at_10_original": original, "ndcg_at_10": perturbed_ndcg,
                             "score": cat.retention_harmonic_mean(original, list(perturbed_ndcg.values()))}
    return cat.mean_over_datasets({n: d["score"] for n, d in per_dataset.items()}), per_dataset


# ---------------------------------------------------------------------------------------------
# The study

class NotRated(LookupError):
    """A scorer (the human row) has no similarity for some pair a category needs."""


def _run_category(runner: Callable[[Scorer], tuple[float | None, Any]], scorer: Scorer,
                  category: str) -> tuple[float | None, Any]:
    if category not in scorer.categories:
        return None, {}
    try:
        return runner(scorer)
    except NotRated as missing:
        return None, {"not_rated": str(missing)}


def run_study(study: Study, scorers: Sequence[Scorer], seed: int = 0) -> dict[str, Any]:
    """Table 1 (rows: one per scorer, grouped) and the per-dataset subtables, as plain JSON-able data."""
    if not scorers:
        raise ValueError("a SAGE study needs at least one scorer")
    if len({s.name for s in scorers}) != len(scorers):
        raise ValueError("scorer names must be unique")
    perturbed = perturb_study(study, seed)
    rows, subtables = [], {c: {} for c in cat.CATEGORIES}
    for scorer in scorers:
        runners = {
            "clustering": lambda s: score_clustering(s, study),
            "human_preference": lambda s: score_human_preference(s, study),
            "robustness": lambda s: score_robustness(s, study, perturbed),
            "sensitivity": lambda s: score_sensitivity(s, study, perturbed),
            "retrieval": lambda s: score_retrieval(s, study, perturbed),
        }
        results = {c: _run_category(runners[c], scorer, c) for c in cat.CATEGORIES}
        scores = {c: results[c][0] for c in cat.CATEGORIES}
        for c in cat.CATEGORIES:
            subtables[c][scorer.name] = results[c][1]
        rows.append({"name": scorer.name, "group": scorer.group, "scores": scores, "overall": cat.overall(scores)})
    order = {g: i for i, g in enumerate(GROUPS)}
    rows.sort(key=lambda r: (order.get(r["group"], len(order)), r["name"]))
    missing = [c for c in cat.CATEGORIES if all(r["scores"][c] is None for r in rows)]
    return {"format": "sage-table-1", "seed": seed, "categories": list(cat.CATEGORIES),
            "missing_categories": missing, "rows": rows, "subtables": subtables}
