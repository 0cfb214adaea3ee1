"""STS: two sentences, their similarity on the task's scale (default 0–5).

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import STS as Kind

__all__ = ["Kind"]
