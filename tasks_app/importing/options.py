"""The options of a dataset import, parsed once from strings for the CLI, the upload page and the API alike."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

from hume.lib.import_reader import ProblemLog
from tasks_app.core.kinds import KINDS
from tasks_app.core.models import language_code

FORMATS = ("jsonl", "csv")


@dataclass(frozen=True)
class ImportOptions:
    """What to import into; None means "not given" (an existing task keeps its value, a new one the default)."""

    name: str
    kind: str
    language: str
    labels: list[str] | None = None
    scale: tuple[float, float] | None = None
    step: float | None = None
    axes: list[str] | None = None
    instructions: str | None = None
    mteb_task_name: str | None = None
    mteb_subset: str | None = None
    dataset_revision: str | None = None
    update_gold: bool = False
    file_format: str | None = None  # None: from the file name (.csv is CSV, anything else JSONL)


def parse_options(raw: Mapping[str, Any], filename: str) -> ImportOptions:
    """Options from strings (argparse, a form, a multipart body); raises ImportFailed naming each bad option."""
    log = ProblemLog(filename)
    name = _text(raw, "name")
    kind = _text(raw, "kind")
    language = _text(raw, "language")
    _check_required(log, name=name, kind=kind, language=language)
    if name and len(name) > 200:
        log.add(None, "name", "must be at most 200 characters")
    if kind and kind not in KINDS:
        log.add(None, "kind", f"unknown task kind {kind!r}; choose one of {', '.join(KINDS)}")
    if language:
        try:
            language_code(language)
        except ValidationError as exc:
            log.add(None, "language", f"{language!r}: {exc.messages[0]}")
    options = ImportOptions(
        name=name or "", kind=kind or "", language=language or "",
        labels=_list(raw, "labels", log), scale=_scale(raw, log), step=_number(raw, "step", log),
        axes=_list(raw, "axes", log), instructions=_text(raw, "instructions", strip=False),
        mteb_task_name=_text(raw, "mteb_task_name"), mteb_subset=_text(raw, "mteb_subset"),
        dataset_revision=_text(raw, "dataset_revision"), update_gold=_flag(raw, "update_gold"),
        file_format=_format(raw, log),
    )
    if kind in KINDS:
        _check_fits_kind(options, log)
    log.raise_if_any()
    return options


def _text(raw: Mapping[str, Any], key: str, *, strip: bool = True) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    value = str(value)
    if strip:
        value = value.strip()
    return value if value.strip() else None


def _check_required(log: ProblemLog, **values: str | None) -> None:
    for key, value in values.items():
        if not value:
            log.add(None, key, "is required")


def _list(raw: Mapping[str, Any], key: str, log: ProblemLog) -> list[str] | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    entries = value if isinstance(value, list) else str(value).split(",")
    entries = [str(e).strip() for e in entries if str(e).strip()]
    duplicates = sorted({e for e in entries if entries.count(e) > 1})
    if duplicates:
        log.add(None, key, f"lists {', '.join(duplicates)} more than once")
    return entries or None


def _number(raw: Mapping[str, Any], key: str, log: ProblemLog) -> float | None:
    text = _text(raw, key)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        log.add(None, key, f"must be a number, got {text!r}")
        return None
    if not math.isfinite(value) or value <= 0:
        log.add(None, key, f"must be a positive number, got {text!r}")
        return None
    return value


def _scale(raw: Mapping[str, Any], log: ProblemLog) -> tuple[float, float] | None:
    value = raw.get("scale")
    text = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else _text(raw, "scale")
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        lo, hi = (float(p) for p in parts)
    except ValueError:
        log.add(None, "scale", f"must be MIN,MAX (two numbers), got {text!r}")
        return None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        log.add(None, "scale", f"MIN must be below MAX, got {text!r}")
        return None
    return lo, hi


def _flag(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key)
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _format(raw: Mapping[str, Any], log: ProblemLog) -> str | None:
    value = _text(raw, "format")
    if value is None:
        return None
    value = value.lower()
    if value not in FORMATS:
        log.add(None, "format", f"must be one of {', '.join(FORMATS)}, got {value!r}")
        return None
    return value


def _check_fits_kind(options: ImportOptions, log: ProblemLog) -> None:
    """Refuse options the kind would silently ignore, so a typo in --kind cannot lose a label set."""
    kind = KINDS[options.kind]
    if options.labels is not None and not kind.needs_labels:
        log.add(None, "labels", f"only classification tasks have labels, not {options.kind}")
    if options.axes is not None and not kind.needs_axes:
        log.add(None, "axes", f"only likert tasks have axes, not {options.kind}")
    if kind.default_scale is None:
        if options.scale is not None:
            log.add(None, "scale", f"{options.kind} tasks have no rating scale")
        if options.step is not None:
            log.add(None, "step", f"{options.kind} tasks have no rating scale")
