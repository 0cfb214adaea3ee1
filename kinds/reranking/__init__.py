"""Reranking: a query (optional instruction) and its candidates, relevant or not per candidate.

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import Reranking as Kind

__all__ = ["Kind"]
