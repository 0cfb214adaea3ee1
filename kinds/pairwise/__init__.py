"""Pairwise: a context and two texts, A, B or tie.

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import Pairwise as Kind

__all__ = ["Kind"]
