"""The human score of the classification kind (HUME protocol; kinds/scorers.py has what the
label kinds share)."""
from __future__ import annotations

from kinds.scorers import (
    CategoricalScorer,
)


class ClassificationScorer(CategoricalScorer):
    """One label per text; HUME reports accuracy (main), macro F1 and weighted F1."""

    gold_metrics = {"accuracy": "accuracy", "f1_macro": "f1_macro", "f1_weighted": "f1_weighted"}
    mteb_score_keys = {"accuracy": "accuracy", "f1_macro": "f1", "f1_weighted": "f1_weighted"}
