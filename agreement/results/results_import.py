"""Import MTEB results into the database: files → ``ScoreRow`` (results/mteb_loading.py, mteb_files.py) → rows.

One path for the CLI (``import_results``), the upload page and the API, so all three accept the same
inputs and refuse them with the same words. Why it is shaped this way:

* **All or nothing.** Every file is parsed and checked before the first row is written, and the writes
  run in one transaction: a bad file (or a value too long for a column) imports nothing and the error
  names the file and the key.
* **Idempotent.** Scores are keyed by (model, revision, task, split, subset), so importing the same
  folder twice changes nothing; a re-run with new numbers updates them in place.
* **Every revision is kept**, and each model's current one follows ``mteb_files.current_revisions``
  unless an admin pinned another (:func:`set_current`); imports never override a pin.
* **Sizes are checked before reading**: an upload or archive over ``MAX_UPLOAD_BYTES`` is refused from
  its declared size; archive members are streamed to a temporary file and capped while they stream
  (``mteb_loading.MAX_FILE_BYTES`` each, ``MAX_ARCHIVE_BYTES`` in all), then parsed one at a time.
"""
from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.db import transaction
from django.http import HttpRequest, QueryDict
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from agreement.results.models import ResultModel, ResultRevision, ResultScore, stored_rows
from agreement.results.mteb_loading import (
    MAX_FILE_BYTES,
    MODEL_META_FILE,
    decode_json,
    load_archive_members,
    load_results_dir,
    load_task_result_file,
    read_archive_members,
    read_limited,
)
from measures.results.mteb_files import (
    HUMAN_REFERENCE_MODELS,
    ResultsImportError,
    ScoreRow,
    current_revisions,
    evaluation_rows,
    parse_task_result,
    version_key,
)

MAX_UPLOAD_BYTES: int = getattr(settings, "RESULTS_MAX_UPLOAD_BYTES", 100 * 1024 * 1024)
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
META_KEYS = (
    "name", "revision", "release_date", "n_parameters", "embed_dim", "max_tokens",
    "license", "open_weights", "reference", "similarity_fn_name",
)
# Column widths of results.models, checked before writing so a long name is an import error, not a 500.
_LIMITS = {"model_name": 300, "revision": 200, "mteb_task_name": 200, "split": 100, "hf_subset": 100,
           "dataset_revision": 200, "mteb_version": 50}


@dataclass(frozen=True)
class Loaded:
    """What one source holds, parsed and checked, before anything is written."""

    source: str
    rows: list[ScoreRow]
    metas: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class ImportSummary:
    """What an import did; ``message`` is what the CLI prints and the upload page shows."""

    source: str
    models: list[str] = field(default_factory=list)
    revisions_created: int = 0
    scores_created: int = 0
    scores_updated: int = 0
    scores_unchanged: int = 0

    @property
    def message(self) -> str:
        return (f"{self.source}: {len(self.models)} model(s); {self.revisions_created} new revision(s); "
                f"{self.scores_created} score(s) added, {self.scores_updated} updated, "
                f"{self.scores_unchanged} unchanged.")

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "models": self.models, "revisions_created": self.revisions_created,
                "scores_created": self.scores_created, "scores_updated": self.scores_updated,
                "scores_unchanged": self.scores_unchanged, "message": self.message}


# ---------------------------------------------------------------------------------------------
# Reading sources


def load_path(path: str | os.PathLike[str], *, model_name: str | None = None,
              revision: str | None = None) -> Loaded:
    """Read a results folder, an archive (.zip, .tar, .tar.gz) or one TaskResult .json from disk."""
    target = Path(path)
    source = str(target)
    if target.is_dir():
        return _non_empty(Loaded(source, load_results_dir(target), _folder_metas(target)))
    if not target.is_file():
        raise ResultsImportError(source, "no such file or folder")
    _check_size(source, target.stat().st_size)
    if _is_archive(target.name):
        with target.open("rb") as handle:
            return _load_archive(source, handle)
    if target.name.endswith(".json"):
        rows = load_task_result_file(target, model_name=model_name, revision=revision)
        return _non_empty(Loaded(source, rows))
    raise ResultsImportError(source, "expected a folder, a .json TaskResult, or a .zip / .tar.gz of a folder")


def load_upload(name: str, handle: IO[bytes], size: int, *, model_name: str | None = None,
                revision: str | None = None) -> Loaded:
    """Read an uploaded archive, or one TaskResult .json (which then needs a model name and revision)."""
    source = PurePosixPath(name.replace("\\", "/")).name or "upload"
    _check_size(source, size)
    if source.endswith(".json"):
        if not model_name or not revision:
            raise ResultsImportError(
                source, "a single TaskResult file needs a model name and a revision "
                "(or upload a .zip / .tar.gz of the <org__model>/<revision>/ folder)")
        raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ResultsImportError(source, f"file is over the {MAX_FILE_BYTES}-byte limit")
        rows = parse_task_result(decode_json(raw, source), source=source, model_name=model_name, revision=revision)
        return _non_empty(Loaded(source, rows))
    return _load_archive(source, handle)


def _load_archive(source: str, handle: IO[bytes]) -> Loaded:
    """Read the archive once: task files become rows, model_meta.json files become metadata."""
    with read_archive_members(handle, source=source) as members:
        rows = load_archive_members(source, members)
        metas: dict[str, dict[str, Any]] = {}
        for member in sorted(members):
            if PurePosixPath(member).name == MODEL_META_FILE:
                _keep_meta(metas, decode_json(members[member], f"{source}!{member}"))
    return _non_empty(Loaded(source, rows, metas))


def _folder_metas(root: Path) -> dict[str, dict[str, Any]]:
    metas: dict[str, dict[str, Any]] = {}
    for meta_path in sorted(root.rglob(MODEL_META_FILE)):
        _keep_meta(metas, decode_json(read_limited(meta_path), str(meta_path)))
    return metas


def _keep_meta(metas: dict[str, dict[str, Any]], meta: Any) -> None:
    """Keep a few descriptive fields; the last revision folder (in sorted order) wins."""
    if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
        metas[meta["name"]] = {key: meta[key] for key in META_KEYS if meta.get(key) is not None}


def _is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _check_size(source: str, size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise ResultsImportError(source, f"file is {size} bytes, over the {MAX_UPLOAD_BYTES}-byte upload limit")


def _non_empty(loaded: Loaded) -> Loaded:
    if not loaded.rows:
        raise ResultsImportError(
            loaded.source, "no MTEB TaskResult found (expected <org__model>/<revision>/<TaskName>.json files)")
    _check_widths(loaded.rows)
    return loaded


def _check_widths(rows: Iterable[ScoreRow]) -> None:
    for row in rows:
        for key, limit in _LIMITS.items():
            value = getattr(row, key) or ""
            if len(value) > limit:
                raise ResultsImportError(row.source_path, f"longer than {limit} characters", key=key)


# ---------------------------------------------------------------------------------------------
# Uploads over the limit (upload page and API)

# Room for the multipart framing and the small form fields around the file itself.
_FORM_OVERHEAD = 64 * 1024


class UploadLimit(FileUploadHandler):
    """Refuse an oversized request from its Content-Length, before Django streams the body anywhere.

    Returning (empty POST, empty FILES) from ``handle_raw_input`` stops the multipart parser; the view
    then sees ``upload_too_large(request)`` and answers 413 with a clear message.
    """

    def handle_raw_input(self, input_data: Any, META: dict[str, Any], content_length: int, boundary: Any,
                         encoding: str | None = None) -> tuple[QueryDict, MultiValueDict] | None:
        if content_length > MAX_UPLOAD_BYTES + _FORM_OVERHEAD:
            self.request.results_upload_too_large = content_length  # type: ignore[union-attr]
            return QueryDict(), MultiValueDict()
        return None

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def upload_too_large(request: HttpRequest) -> str | None:
    """The error for an upload UploadLimit refused, or None (reading POST runs the handler)."""
    request.POST  # noqa: B018 - parse now, so the handler has decided
    size = getattr(request, "results_upload_too_large", None)
    if size is None:
        return None
    return f"upload: request is {size} bytes, over the {MAX_UPLOAD_BYTES}-byte upload limit; nothing imported"


# ---------------------------------------------------------------------------------------------
# Writing


def import_path(path: str | os.PathLike[str], **options: str | None) -> ImportSummary:
    return save(load_path(path, **options))


def import_upload(name: str, handle: IO[bytes], size: int, **options: str | None) -> ImportSummary:
    return save(load_upload(name, handle, size, **options))


@transaction.atomic
def save(loaded: Loaded) -> ImportSummary:
    """Write every row of a checked source in one transaction, then re-pick current revisions."""
    summary = ImportSummary(source=loaded.source)
    models = _upsert_models(loaded)
    summary.models = sorted(models)
    grouped: dict[tuple[str, str], list[ScoreRow]] = defaultdict(list)
    for row in loaded.rows:
        grouped[(row.model_name, row.revision)].append(row)
    for (name, revision_name), rows in sorted(grouped.items()):
        revision, created = ResultRevision.objects.get_or_create(
            model=models[name], revision=revision_name, defaults={"annotator_id": rows[0].annotator_id or ""})
        summary.revisions_created += created
        _upsert_scores(revision, rows, summary)
        _refresh_revision_stats(revision)
    for model in models.values():
        refresh_current(model)
    return summary


def _upsert_models(loaded: Loaded) -> dict[str, ResultModel]:
    models: dict[str, ResultModel] = {}
    for name in sorted({row.model_name for row in loaded.rows}):
        agent = ResultModel.Agent.HUMAN_REFERENCE if name in HUMAN_REFERENCE_MODELS else ResultModel.Agent.MODEL
        meta = loaded.metas.get(name, {})
        model, created = ResultModel.objects.select_for_update().get_or_create(
            name=name, defaults={"agent": agent, "meta": meta})
        if not created and meta and model.meta != meta:
            model.meta = meta
            model.save(update_fields=["meta", "updated_at"])
        models[name] = model
    return models


def _upsert_scores(revision: ResultRevision, rows: Sequence[ScoreRow], summary: ImportSummary) -> None:
    existing = {(s.mteb_task_name, s.split, s.hf_subset): s for s in revision.scores.all()}
    new, changed = [], []
    for row in rows:
        values = _score_values(row)
        score = existing.get((row.mteb_task_name, row.split, row.hf_subset))
        if score is None:
            new.append(ResultScore(revision=revision, mteb_task_name=row.mteb_task_name, split=row.split,
                                   hf_subset=row.hf_subset, **values))
        elif any(getattr(score, key) != value for key, value in values.items()):
            for key, value in values.items():
                setattr(score, key, value)
            changed.append(score)
        else:
            summary.scores_unchanged += 1
    ResultScore.objects.bulk_create(new)
    if changed:
        ResultScore.objects.bulk_update(changed, list(_score_values(rows[0])))
    summary.scores_created += len(new)
    summary.scores_updated += len(changed)


def _score_values(row: ScoreRow) -> dict[str, Any]:
    return {"languages": list(row.languages), "main_score": row.main_score, "metrics": dict(row.metrics),
            "agreement": row.agreement, "dataset_revision": row.dataset_revision,
            "mteb_version": row.mteb_version or "", "source_path": row.source_path[:1000]}


def _refresh_revision_stats(revision: ResultRevision) -> None:
    """Subsets in the compared split and the newest MTEB version, from what is stored now."""
    rows = stored_rows(revision_id=revision.pk)
    revision.n_subsets = len({(row.mteb_task_name, row.hf_subset) for row in evaluation_rows(rows)})
    versions = [row.mteb_version for row in rows if row.mteb_version]
    revision.mteb_version = max(versions, key=version_key, default="")
    revision.imported_at = timezone.now()
    revision.save(update_fields=["n_subsets", "mteb_version", "imported_at"])


# ---------------------------------------------------------------------------------------------
# Current revision


def refresh_current(model: ResultModel) -> ResultRevision | None:
    """Apply the current-revision rule of mteb_results to a model, unless an admin pinned one."""
    if model.current_pinned and model.revisions.filter(is_current=True).exists():
        return model.revisions.get(is_current=True)
    chosen = current_revisions(stored_rows(revision__model=model)).get(model.name)
    revision = model.revisions.get(revision=chosen) if chosen else None
    _make_current(model, revision)
    return revision


@transaction.atomic
def set_current(revision: ResultRevision) -> None:
    """An admin's choice: make this revision current and keep it so across later imports."""
    if revision.annotator_id:
        raise ValueError("a single annotator's scores cannot be a current revision")
    model = ResultModel.objects.select_for_update().get(pk=revision.model_id)
    _make_current(model, revision)
    model.current_pinned = True
    model.save(update_fields=["current_pinned", "updated_at"])


@transaction.atomic
def unpin_current(model: ResultModel) -> ResultRevision | None:
    """Drop an admin's pin: the rule picks the current revision again."""
    model = ResultModel.objects.select_for_update().get(pk=model.pk)
    model.current_pinned = False
    model.save(update_fields=["current_pinned", "updated_at"])
    return refresh_current(model)


def _make_current(model: ResultModel, revision: ResultRevision | None) -> None:
    # Clear first: the partial unique constraint allows one current revision per model at any moment.
    model.revisions.filter(is_current=True).exclude(pk=getattr(revision, "pk", None)).update(is_current=False)
    if revision is not None:
        ResultRevision.objects.filter(pk=revision.pk).update(is_current=True)


def revision_counts() -> Mapping[str, int]:
    """Row counts of the three tables: what tests compare to prove a refused import changed nothing."""
    return {"models": ResultModel.objects.count(), "revisions": ResultRevision.objects.count(),
            "scores": ResultScore.objects.count()}
