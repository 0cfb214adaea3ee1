"""Read MTEB results (TaskResult JSON files) into plain rows, refusing anything malformed.

Researchers import model results in MTEB's results format (docs/models.md): a folder laid out as
``<org__model>/<revision>/<TaskName>.json`` with an optional ``model_meta.json`` beside the task files,
or a .zip / .tar.gz of such a folder. Every task-subset score becomes one :class:`ScoreRow`; the
comparison math lives in ``measures/results/table1.py`` and its siblings and never sees files. This module parses and
chooses rows; ``mteb_loading.py`` reads the files, folders and archives and hands their bytes here.

Rules this module fixes (and why):

* **Errors.** Anything malformed raises :class:`ResultsImportError`, whose message names the file and
  the key at fault. Loading a folder or an archive is all-or-nothing: every file is checked first and
  all problems are reported together, so an import never half-succeeds (docs/architecture.md, "Rules
  every change keeps").
* **main_score is required.** MTEB has written ``main_score`` into every subset since v1.11. A subset
  without it is an error even when ``map`` (paper-era reranking) or ``map_at_1000`` (newer runs) is
  present: guessing which metric the task meant would silently mix metrics across MTEB versions.
  Both keys are kept as they are in ``metrics``.
* **Languages.** ``nor-Latn`` (what paper-era files write for Norwegian) becomes ``nob-Latn`` (what
  HUME and newer MTEB use), so Norwegian results from both eras meet in one column.
* **Split.** Every split in a file is parsed; comparisons use one split per task: the first present of
  ``test``, ``devtest``, ``dev``, ``validation`` (HUME reports ``test`` only), else the only split.
* **Current revision.** A model may have several revision folders; all are parsed, and
  :func:`current_revisions` picks one per model: the most complete (most task-subsets), then the one
  run with the newest MTEB version (MTEB's own leaderboard rule), then the latest date-like revision
  name, then the greatest revision string. File times are never used: copies and checkouts reset them.
* **Human baseline.** ``baseline__Human`` rows are human reference rows. ``annotator_<id>`` revisions
  (of it, or of any human export) hold single annotators: they carry ``annotator_id`` and never compete
  for "current".
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# The published baseline, and what `export_mteb` writes by default (mteb_export.DEFAULT_MODEL_NAME).
HUMAN_REFERENCE_MODELS = frozenset({"baseline/Human", "hume/Human"})
ANNOTATOR_PREFIX = "annotator_"
SPLIT_PREFERENCE = ("test", "devtest", "dev", "validation")
LANGUAGE_ALIASES = {"nor-Latn": "nob-Latn"}

# Keys of a subset that describe it rather than score it.
_NON_METRIC_KEYS = frozenset({"main_score", "hf_subset", "languages", "evaluation_time"})
_DATE_REVISION = re.compile(r"^(\d{4})[-_.]?(\d{2})[-_.]?(\d{2})$")


class ResultsImportError(ValueError):
    """The one error raised for malformed results; the message names the file and the key at fault."""

    def __init__(self, source: str, problem: str, *, key: str | None = None) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}")


class ResultsImportErrors(ResultsImportError):
    """Several files failed; raised once so a folder or archive imports nothing (all-or-nothing)."""

    def __init__(self, source: str, errors: Sequence[ResultsImportError]) -> None:
        self.errors = list(errors)
        lines = "\n".join(f"  - {error}" for error in self.errors)
        super().__init__(source, f"{len(self.errors)} problem(s) found, nothing imported:\n{lines}")


@dataclass(frozen=True)
class ScoreRow:
    """One main score of one model (or human) on one task subset, as MTEB reports it (0–1 scale)."""

    model_name: str
    revision: str
    is_human_reference: bool
    annotator_id: str | None
    mteb_task_name: str
    split: str
    hf_subset: str
    languages: list[str]
    main_score: float
    metrics: dict[str, float]
    dataset_revision: str
    mteb_version: str | None
    source_path: str
    agreement: dict[str, Any] | None = field(default=None, compare=False)


# ---------------------------------------------------------------------------------------------
# Parsing one TaskResult


def normalize_language(code: str) -> str:
    """Map a language code to the spelling comparisons use (``nor-Latn`` → ``nob-Latn``)."""
    return LANGUAGE_ALIASES.get(code, code)


def model_name_from_folder(folder: str) -> str:
    """MTEB writes ``org/model`` as the folder ``org__model``; undo that."""
    return folder.replace("__", "/", 1)


def parse_task_result(data: Any, *, source: str, model_name: str, revision: str) -> list[ScoreRow]:
    """Turn an already-decoded TaskResult into rows, checking every key comparisons rely on."""
    if not isinstance(data, dict):
        raise ResultsImportError(source, "expected a JSON object (an MTEB TaskResult)")
    task_name = _required_str(data, "task_name", source)
    scores = data.get("scores")
    if scores is None:
        raise ResultsImportError(source, "missing key (not an MTEB TaskResult)", key="scores")
    if not isinstance(scores, dict) or not scores:
        raise ResultsImportError(source, "expected a non-empty object of splits", key="scores")
    annotator_id = _annotator_id(model_name, revision)
    header = {
        "model_name": model_name,
        "revision": revision,
        "is_human_reference": model_name in HUMAN_REFERENCE_MODELS,
        "annotator_id": annotator_id,
        "mteb_task_name": task_name,
        "dataset_revision": _optional_str(data, "dataset_revision", source) or "",
        "mteb_version": _optional_str(data, "mteb_version", source),
        "source_path": source,
    }
    rows: list[ScoreRow] = []
    for split, subsets in scores.items():
        rows.extend(_parse_split(split, subsets, header, source))
    return rows


def _parse_split(
    split: str, subsets: Any, header: Mapping[str, Any], source: str
) -> list[ScoreRow]:
    """Parse one split's list of subsets; a split given as an object is the pre-1.11 layout."""
    key = f"scores.{split}"
    if not isinstance(subsets, list):
        raise ResultsImportError(
            source, "expected a list of subsets (TaskResult format of MTEB >= 1.11)", key=key
        )
    if not subsets:
        raise ResultsImportError(source, "no subsets in this split", key=key)
    rows: list[ScoreRow] = []
    seen: set[str] = set()
    for index, subset in enumerate(subsets):
        row = _parse_subset(subset, f"{key}[{index}]", split, header, source)
        if row.hf_subset in seen:
            raise ResultsImportError(
                source, f"hf_subset {row.hf_subset!r} appears twice", key=f"{key}[{index}]"
            )
        seen.add(row.hf_subset)
        rows.append(row)
    return rows


def _parse_subset(
    subset: Any, key: str, split: str, header: Mapping[str, Any], source: str
) -> ScoreRow:
    """Validate one subset entry and build its row."""
    if not isinstance(subset, dict):
        raise ResultsImportError(source, "expected an object", key=key)
    hf_subset = subset.get("hf_subset")
    if not isinstance(hf_subset, str) or not hf_subset:
        raise ResultsImportError(source, "missing or not a string", key=f"{key}.hf_subset")
    languages = subset.get("languages")
    if (
        not languages
        or not isinstance(languages, list)
        or not all(isinstance(x, str) for x in languages)
    ):
        raise ResultsImportError(
            source, "missing or not a non-empty list of strings", key=f"{key}.languages"
        )
    return ScoreRow(
        split=split,
        hf_subset=hf_subset,
        languages=[normalize_language(code) for code in languages],
        main_score=_main_score(subset, key, source),
        metrics=_numeric_metrics(subset),
        agreement=subset.get("agreement") if isinstance(subset.get("agreement"), dict) else None,
        **header,
    )


def _main_score(subset: Mapping[str, Any], key: str, source: str) -> float:
    """Return the subset's main score; never guessed from another metric (see module docstring)."""
    if "main_score" not in subset:
        hint = [name for name in ("map", "map_at_1000") if name in subset]
        found = f" (found {', '.join(hint)}, but main_score is required)" if hint else ""
        raise ResultsImportError(source, f"missing key{found}", key=f"{key}.main_score")
    value = subset["main_score"]
    if not _is_number(value) or not math.isfinite(value):
        raise ResultsImportError(source, f"not a finite number: {value!r}", key=f"{key}.main_score")
    return float(value)


def _numeric_metrics(subset: Mapping[str, Any]) -> dict[str, float]:
    """Keep every finite numeric metric; nested objects (e.g. ``agreement``) as dotted keys.

    Lists (``scores_per_experiment``, MTEB's v_measures) are per-run detail, not metrics, and NaN
    carries no information and would not survive a JSON export, so both are left out.
    """
    metrics: dict[str, float] = {}
    for name, value in subset.items():
        if name in _NON_METRIC_KEYS:
            continue
        if isinstance(value, dict):
            for inner, inner_value in value.items():
                if _is_number(inner_value) and math.isfinite(inner_value):
                    metrics[f"{name}.{inner}"] = float(inner_value)
        elif _is_number(value) and math.isfinite(value):
            metrics[name] = float(value)
    return metrics


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _required_str(data: Mapping[str, Any], key: str, source: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ResultsImportError(source, "missing or not a non-empty string", key=key)
    return value


def _optional_str(data: Mapping[str, Any], key: str, source: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ResultsImportError(source, "not a string", key=key)
    return value


def _annotator_id(model_name: str, revision: str) -> str | None:
    """Revisions named ``annotator_<id>`` hold one annotator's own scores (the published baseline's layout,
    which ``export_mteb`` writes for any model name)."""
    if revision.startswith(ANNOTATOR_PREFIX):
        return revision[len(ANNOTATOR_PREFIX) :] or None
    return None




# ---------------------------------------------------------------------------------------------
# Choosing rows for comparison


def preferred_split(splits: Iterable[str]) -> str | None:
    """The split comparisons use: first of SPLIT_PREFERENCE present, else the only one, else None."""
    available = set(splits)
    for split in SPLIT_PREFERENCE:
        if split in available:
            return split
    return next(iter(available)) if len(available) == 1 else None


def evaluation_rows(rows: Iterable[ScoreRow]) -> list[ScoreRow]:
    """Keep, for each model revision (or annotator) and task, only the rows of the preferred split."""
    grouped: dict[tuple[str, str, str], list[ScoreRow]] = defaultdict(list)
    for row in rows:
        grouped[(row.model_name, row.revision, row.mteb_task_name)].append(row)
    kept: list[ScoreRow] = []
    for group in grouped.values():
        split = preferred_split(row.split for row in group)
        kept.extend(row for row in group if row.split == split)
    return kept


def current_revisions(rows: Iterable[ScoreRow]) -> dict[str, str]:
    """Pick each model's current revision (rule in the module docstring); annotators never count."""
    by_revision: dict[tuple[str, str], list[ScoreRow]] = defaultdict(list)
    for row in evaluation_rows(row for row in rows if row.annotator_id is None):
        by_revision[(row.model_name, row.revision)].append(row)
    best: dict[str, tuple[tuple[Any, ...], str]] = {}
    for (model, revision), group in by_revision.items():
        key = _revision_rank(revision, group)
        if model not in best or key > best[model][0]:
            best[model] = (key, revision)
    return {model: revision for model, (_, revision) in sorted(best.items())}


def _revision_rank(revision: str, rows: Sequence[ScoreRow]) -> tuple[Any, ...]:
    """Sort key: completeness, newest MTEB version, date-like revision name, revision string."""
    subsets = {(row.mteb_task_name, row.hf_subset) for row in rows}
    newest_mteb = max((version_key(row.mteb_version) for row in rows), default=())
    date = _DATE_REVISION.match(revision)
    return (len(subsets), newest_mteb, "".join(date.groups()) if date else "", revision)


def version_key(version: str | None) -> tuple[int, ...]:
    """Order MTEB version strings numerically ("1.34.7" > "1.18.0"); missing versions sort first."""
    return tuple(int(number) for number in re.findall(r"\d+", version or ""))


def leaderboard_rows(rows: Iterable[ScoreRow]) -> list[ScoreRow]:
    """Rows that compete: each model's current revision, preferred split, no single annotators."""
    candidates = [row for row in rows if row.annotator_id is None]
    current = current_revisions(candidates)
    chosen = [row for row in candidates if current.get(row.model_name) == row.revision]
    return evaluation_rows(chosen)


def annotator_rows(rows: Iterable[ScoreRow]) -> list[ScoreRow]:
    """Rows of individual human annotators (``baseline__Human/annotator_<id>``), preferred split."""
    return evaluation_rows(row for row in rows if row.annotator_id is not None)
