"""Graded relevance: a query and its documents, a score per document on the task's scale.

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import GradedRelevance as Kind

__all__ = ["Kind"]
