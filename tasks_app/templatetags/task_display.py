"""Template filters for task pages: safe Markdown instructions, compact JSON for gold values, the task kinds."""
from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from .. import instructions
from ..core.kinds import KINDS, TaskKind, canonical_json

register = template.Library()


def render_markdown(text: str) -> SafeString:
    """Markdown to HTML with the app's one renderer (tasks_app/instructions.py)."""
    return instructions.to_html(text)


@register.filter(name="markdown_safe")
def markdown_safe(text: str) -> SafeString:
    """{{ task.instructions|markdown_safe }}"""
    return render_markdown(text)


@register.filter(name="as_json")
def as_json(value: Any) -> str:
    """A gold value as compact text: labels as they are, structures as JSON (autoescaped like any string)."""
    if value is None:
        return "—"
    return value if isinstance(value, str) else canonical_json(value)


@register.simple_tag
def task_kinds() -> list[TaskKind]:
    """{% task_kinds as kinds %}: every kind's definition, for the file-formats table."""
    return list(KINDS.values())
