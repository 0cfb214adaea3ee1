"""Instructions as HTML: the one Markdown renderer and configuration of the app.

The annotator's page, the task page and the admin's preview all call `to_html`, so a table (or a fenced
block) written by an admin looks the same wherever it is read; nh3's allow-list then removes script, event
handlers and unsafe links. Instructions are shown with every item, so renderings are cached by content.
"""
from __future__ import annotations

from functools import lru_cache

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

EXTENSIONS = ("tables", "fenced_code", "sane_lists")


@lru_cache(maxsize=256)
def _html(text: str) -> str:
    return nh3.clean(markdown.markdown(text, extensions=list(EXTENSIONS)))


def to_html(text: str | None) -> SafeString:
    """Admin-written Markdown as sanitised HTML."""
    return mark_safe(_html(text or ""))
