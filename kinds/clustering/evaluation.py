"""How models are run and scored on clustering items: k-means on the embeddings (agglomerative on pair
distances for a model without vectors), V-measure as MTEB; every annotator's partition is a reference; a
paired permutation test of V-measure over sets."""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import metrics as skm

from kinds.evaluation import (
    Evaluated,
    Items,
    ModelAccess,
    ModelEvaluation,
)
from measures import model_scoring, significance


class ClusteringEvaluation(ModelEvaluation):
    main_metric = "v_measure"

    def item_texts(self, payload: dict[str, Any]) -> list[str]:
        return list(payload["sentences"])

    def evaluate(self, model: ModelAccess, items: Items, truth: dict[int, Any], protocol: str = "mteb") -> Evaluated:
        sets = []
        for i, p in items:
            sentences = list(p["sentences"])
            if model.is_encoder:
                vectors = model.embed(sentences)
                distances = model_scoring.cosine_distances(vectors)
            else:
                vectors, distances = None, pair_distances(model, sentences)
            sets.append((vectors, distances, truth[i]))
        return model_scoring.clustering(sets)

    def main_metric_for(self, model: ModelAccess) -> str:
        return self.main_metric if model.is_encoder else "v_measure_agglomerative"

    def consensus(self, answers: list[Any]) -> Any:
        return answers  # every annotator's partition is a reference; the item's figure is their mean

    def gold_truth(self, gold: Any) -> Any:
        return [gold]  # one reference partition

    def paired_test(self, ids: list[int], payloads: dict[int, dict[str, Any]], gold: dict[int, Any],
                    humans: dict[int, Any], model: dict[int, Any]) -> dict[str, Any] | None:
        h = [float(np.mean([skm.v_measure_score(gold[i], p) for p in humans[i]])) for i in ids]
        m = [skm.v_measure_score(gold[i], model[i]) for i in ids]
        return significance.paired_permutation(h, m, "sets")


def pair_distances(model: ModelAccess, texts: list[str]) -> np.ndarray:
    """1 − similarity over all pairs, symmetrised (BM25 and ROUGE are not symmetric), 0 on the diagonal."""
    n = len(texts)
    rows, cols = np.triu_indices(n, k=1)
    forward = model.similarity([texts[r] for r in rows], [texts[c] for c in cols])
    backward = model.similarity([texts[c] for c in cols], [texts[r] for r in rows])
    sim = (forward + backward) / 2
    top = sim.max() if sim.size and sim.max() > 1 else 1.0  # BM25 is unbounded: scale into [0, 1]
    matrix = np.zeros((n, n))
    matrix[rows, cols] = matrix[cols, rows] = 1.0 - sim / top
    return matrix
