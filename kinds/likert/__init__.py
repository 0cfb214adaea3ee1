"""Likert: a context and one text, a score per named axis (default 1–7).

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import Likert as Kind

__all__ = ["Kind"]
