"""Metric keys in words on the pages: ``{{ key|metric_label:"agreement" }}`` and ``{{ key|metric_help:"gold" }}``
(the section is "agreement", "gold" or "ci"; see measures/metric_names.py)."""
from __future__ import annotations

from django import template

from measures import metric_names

register = template.Library()


@register.filter
def metric_label(key: str | None, section: str = "gold") -> str:
    return metric_names.label(key, section)  # type: ignore[arg-type]


@register.filter
def metric_help(key: str | None, section: str = "gold") -> str:
    return metric_names.definition(key, section)  # type: ignore[arg-type]
