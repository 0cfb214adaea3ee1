"""Clustering: a set of texts, a free cluster id per text; only the partition counts.

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import Clustering as Kind

__all__ = ["Kind"]
