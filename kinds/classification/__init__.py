"""Classification: one text, one label of the task's label set (HUME: the label kinds).

Everything about the kind lives in this folder; kinds/kind_registry.py registers it by one line."""
from .definition import Classification as Kind

__all__ = ["Kind"]
