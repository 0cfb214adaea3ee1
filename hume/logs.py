"""Logging filters. A refused request (PermissionDenied, a 403) is an expected outcome, not a crash: Django logs
it with the exception attached, which prints a whole traceback for every refusal. The filter keeps the one
line ("Forbidden (Permission denied): /path") and drops the traceback."""
from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied


class NoTracebackForPermissionDenied(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], PermissionDenied):
            record.exc_info = None
            record.exc_text = None
        return True
