"""The human score of the pairwise kind (HUME protocol; kinds/scorers.py has what the label
kinds share)."""
from __future__ import annotations

from kinds.scorers import (
    CategoricalScorer,
)


class PairwiseScorer(CategoricalScorer):
    """"a", "b" or "tie" per pair of candidates; accuracy (main) and macro precision/recall/F1."""

    gold_metrics = {
        "accuracy": "accuracy", "precision": "precision_macro", "recall": "recall_macro", "f1": "f1_macro",
    }
    mteb_score_keys = {"accuracy": "accuracy", "f1": "f1", "precision": "precision", "recall": "recall"}
