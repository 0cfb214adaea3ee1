"""Read MTEB results (TaskResult JSON files) into plain rows, refusing anything malformed.

Researchers import model results in MTEB's results format (DESIGN.md §4): a folder laid out as
``<org__model>/<revision>/<TaskName>.json`` with an optional ``model_meta.json`` beside the task files,
or a .zip / .tar.gz of such a folder. Every task-subset score becomes one :class:`ScoreRow`; the
comparison math lives in ``agreement/leaderboard.py`` and never sees files.

Rules this module fixes (and why):

* **Errors.** Anything malformed raises :class:`ResultsImportError`, whose message names the file and
  the key at fault. Loading a folder or an archive is all-or-nothing: every file is checked first and
  all problems are reported together, so an import never half-succeeds (DESIGN.md §6).
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
* **Human baseline.** ``baseline__Human`` rows are human reference rows. Its ``annotator_<id>``
  revisions hold single annotators: they carry ``annotator_id`` and never compete for "current".
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any, TypeVar

Handle = TypeVar("Handle")

# An archive's members are held in memory until the whole import is checked, so both caps bound the server's
# memory (a 550 KB zip expanding to 500 MiB grew it by 580 MB). A TaskResult file is a few kB; the 13 models of
# the HUME study with the human baseline are 1.4 MB in all.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 20_000

HUMAN_REFERENCE_MODELS = frozenset({"baseline/Human"})
ANNOTATOR_PREFIX = "annotator_"
MODEL_META_FILE = "model_meta.json"
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

    Lists (``scores_per_experiment``, ``v_measures``) are per-run detail, not metrics, and NaN
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
    """Human baseline revisions named ``annotator_<id>`` hold one annotator's own scores."""
    if model_name in HUMAN_REFERENCE_MODELS and revision.startswith(ANNOTATOR_PREFIX):
        return revision[len(ANNOTATOR_PREFIX) :] or None
    return None


# ---------------------------------------------------------------------------------------------
# Files and folders


def decode_json(raw: bytes, source: str) -> Any:
    """Decode UTF-8 JSON bytes, turning every decoding failure into a ResultsImportError."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsImportError(source, f"not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise ResultsImportError(
            source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc


def read_limited(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """Read a file after checking its size, so an oversized upload is never loaded into memory."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ResultsImportError(
                source, f"file is {size} bytes, over the {max_bytes}-byte limit"
            )
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ResultsImportError(source, f"cannot read file ({exc.strerror})") from exc
    if len(raw) > max_bytes:  # the file grew between stat() and read()
        raise ResultsImportError(source, f"file is over the {max_bytes}-byte limit")
    return raw


def load_task_result_file(
    path: str | os.PathLike[str],
    *,
    model_name: str | None = None,
    revision: str | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> list[ScoreRow]:
    """Load one TaskResult file; model and revision default to the ``<org__model>/<revision>/`` path."""
    file_path = Path(path)
    if model_name is None:
        model_name = _model_name_beside(file_path, max_file_bytes)
    revision = revision if revision is not None else file_path.parent.name
    data = decode_json(read_limited(file_path, max_file_bytes), str(file_path))
    return parse_task_result(data, source=str(file_path), model_name=model_name, revision=revision)


def _model_name_beside(file_path: Path, max_file_bytes: int) -> str:
    """Prefer the name in ``model_meta.json`` (it keeps the ``/``); else undo the folder encoding."""
    meta_path = file_path.parent / MODEL_META_FILE
    folder_name = model_name_from_folder(file_path.parent.parent.name)
    if not meta_path.is_file():
        return folder_name
    meta = decode_json(read_limited(meta_path, max_file_bytes), str(meta_path))
    return model_name_from_meta(meta, str(meta_path)) or folder_name


def model_name_from_meta(meta: Any, source: str) -> str | None:
    """Return ``name`` from a decoded model_meta.json (None when absent)."""
    if not isinstance(meta, dict):
        raise ResultsImportError(source, "expected a JSON object (MTEB model metadata)")
    name = meta.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ResultsImportError(source, "not a non-empty string", key="name")
    return name


def load_results_dir(
    root: str | os.PathLike[str], *, max_file_bytes: int = MAX_FILE_BYTES
) -> list[ScoreRow]:
    """Load every TaskResult under ``root`` (``<org__model>/<revision>/<Task>.json``), all or nothing.

    JSON files are attributed by their last three path parts, so ``root`` may also be a parent of
    the model folders (e.g. the ``results/`` folder of the MTEB results repository). Files that are
    not ``.json`` (READMEs) are ignored; symlinks are refused, as in archives.
    """
    root_path = Path(root)
    if not root_path.is_dir():
        raise ResultsImportError(str(root_path), "not a directory")
    members = list(_walk_json_files(root_path))
    return _load_members(
        str(root_path),
        members,
        read=lambda path: read_limited(path, max_file_bytes),
        describe=lambda name: str(root_path / name),
    )


def _walk_json_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield (relative posix name, path) of JSON files in a stable order; refuse symlinks."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                raise ResultsImportError(str(path), "symbolic links are not followed")
        for filename in sorted(filenames):
            if filename.endswith(".json"):
                path = Path(dirpath) / filename
                yield path.relative_to(root).as_posix(), path


def _load_members(
    source: str,
    members: Sequence[tuple[str, Handle]],
    *,
    read: Callable[[Handle], bytes],
    describe: Callable[[str], str],
) -> list[ScoreRow]:
    """Parse named result files (of a folder or an archive) into rows, or raise for all problems.

    ``read`` turns a member handle into bytes and ``describe`` names a member in errors. Model
    metadata is read first so that each task file gets the model name its folder declares.
    """
    errors: list[ResultsImportError] = []
    meta_names = _meta_names(members, read, describe, errors)
    rows: list[ScoreRow] = []
    seen: dict[tuple[str, str, str], str] = {}
    for name, handle in members:
        if PurePosixPath(name).name == MODEL_META_FILE:
            continue
        try:
            member_rows = _load_member(name, describe(name), read(handle), meta_names)
            _check_unique(member_rows, describe(name), seen)
            rows.extend(member_rows)
        except ResultsImportError as exc:
            errors.append(exc)
    if errors:
        raise errors[0] if len(errors) == 1 else ResultsImportErrors(source, errors)
    return rows


def _meta_names(
    members: Sequence[tuple[str, Handle]],
    read: Callable[[Handle], bytes],
    describe: Callable[[str], str],
    errors: list[ResultsImportError],
) -> dict[PurePosixPath, str]:
    """Model names declared by each revision folder's model_meta.json, keyed by that folder."""
    names: dict[PurePosixPath, str] = {}
    for name, handle in members:
        path = PurePosixPath(name)
        if path.name != MODEL_META_FILE:
            continue
        try:
            declared = model_name_from_meta(
                decode_json(read(handle), describe(name)), describe(name)
            )
        except ResultsImportError as exc:
            errors.append(exc)
            continue
        if declared:
            names[path.parent] = declared
    return names


def _load_member(
    name: str, source: str, raw: bytes, meta_names: Mapping[PurePosixPath, str]
) -> list[ScoreRow]:
    """Parse one task file of a folder/archive, attributing it by its last three path parts."""
    path = PurePosixPath(name)
    if len(path.parts) < 3:
        raise ResultsImportError(
            source, "cannot tell model and revision: expected <org__model>/<revision>/<Task>.json"
        )
    model_name = meta_names.get(path.parent) or model_name_from_folder(path.parts[-3])
    data = decode_json(raw, source)
    return parse_task_result(data, source=source, model_name=model_name, revision=path.parts[-2])


def _check_unique(
    rows: Sequence[ScoreRow], source: str, seen: dict[tuple[str, str, str], str]
) -> None:
    """Two files claiming the same model, revision and task would make the import ambiguous."""
    first = rows[0]
    identity = (first.model_name, first.revision, first.mteb_task_name)
    if identity in seen:
        raise ResultsImportError(
            source, f"duplicate result for {identity}; also in {seen[identity]}"
        )
    seen[identity] = source


# ---------------------------------------------------------------------------------------------
# Archives (uploads)


def load_results_archive(
    archive: str | os.PathLike[str] | IO[bytes],
    *,
    name: str | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_ARCHIVE_BYTES,
    max_members: int = MAX_ARCHIVE_MEMBERS,
) -> list[ScoreRow]:
    """Load the TaskResults of a .zip or .tar(.gz) upload, in memory, all or nothing.

    Nothing is written to disk, and members are vetted before any is read: absolute names,
    ``..`` components, links and special files are refused, and member and total sizes are capped
    (declared sizes are checked first, actual bytes again while reading), so a hostile upload can
    neither escape a folder nor exhaust memory.
    """
    source = name or (str(archive) if isinstance(archive, str | os.PathLike) else "upload")
    members = read_archive_members(
        archive,
        source=source,
        max_file_bytes=max_file_bytes,
        max_total_bytes=max_total_bytes,
        max_members=max_members,
    )
    return load_archive_members(source, members)


def load_archive_members(source: str, members: Mapping[str, bytes]) -> list[ScoreRow]:
    """Parse the JSON members already read by :func:`read_archive_members`, all or nothing.

    Public so a caller that also wants the archive's ``model_meta.json`` reads the archive once.
    """
    json_members = [(member, data) for member, data in members.items() if member.endswith(".json")]
    return _load_members(
        source, json_members, read=lambda data: data, describe=lambda member: f"{source}!{member}"
    )


def read_archive_members(
    archive: str | os.PathLike[str] | IO[bytes],
    *,
    source: str = "upload",
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_ARCHIVE_BYTES,
    max_members: int = MAX_ARCHIVE_MEMBERS,
) -> dict[str, bytes]:
    """Return {safe member name: bytes} for the regular files of a .zip or .tar(.gz) archive."""
    limits = _Limits(source, max_file_bytes, max_total_bytes, max_members)
    handle = _open_binary(archive, source)
    try:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            return _read_zip(handle, limits)
        handle.seek(0)
        return _read_tar(handle, limits)
    finally:
        if isinstance(archive, str | os.PathLike):
            handle.close()


@dataclass
class _Limits:
    """Caps for one archive; ``members`` and ``total`` count what has been accepted so far."""

    source: str
    max_file_bytes: int
    max_total_bytes: int
    max_members: int
    members: int = 0
    total: int = 0

    def where(self, name: str) -> str:
        return f"{self.source}!{name}"

    def admit(self, name: str, declared_size: int, taken: Mapping[str, bytes]) -> None:
        """Check a member's header before reading it: count, declared size, duplicate name."""
        self.members += 1
        if self.members > self.max_members:
            raise ResultsImportError(self.source, f"more than {self.max_members} members")
        if declared_size > self.max_file_bytes:
            raise ResultsImportError(
                self.where(name),
                f"member is {declared_size} bytes, over the {self.max_file_bytes}-byte limit",
            )
        if name in taken:
            raise ResultsImportError(self.where(name), "member name appears twice")

    def read(self, name: str, stream: IO[bytes]) -> bytes:
        """Read at most the cap, whatever the header claimed; corrupt data becomes an import error."""
        try:
            data = stream.read(self.max_file_bytes + 1)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
            raise ResultsImportError(self.where(name), f"corrupt member ({exc})") from exc
        if len(data) > self.max_file_bytes:
            raise ResultsImportError(
                self.where(name), f"member is over the {self.max_file_bytes}-byte limit"
            )
        self.total += len(data)
        if self.total > self.max_total_bytes:
            raise ResultsImportError(
                self.source, f"archive expands to more than {self.max_total_bytes} bytes"
            )
        return data


def _open_binary(archive: str | os.PathLike[str] | IO[bytes], source: str) -> IO[bytes]:
    if not isinstance(archive, str | os.PathLike):
        return archive
    try:
        return Path(archive).open("rb")
    except OSError as exc:
        raise ResultsImportError(source, f"cannot read file ({exc.strerror})") from exc


def safe_member_name(name: str, source: str) -> str:
    """Return the member name as a relative posix path, or raise if it could escape a folder.

    Refuses absolute paths, Windows drive letters and backslash separators (which Windows tools
    would treat as folders), ``..`` components and empty names.
    """
    member_source = f"{source}!{name}"
    if "\\" in name or "\x00" in name:
        raise ResultsImportError(member_source, "unsafe member name (backslash or NUL)")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise ResultsImportError(member_source, "unsafe member name (absolute path)")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ResultsImportError(member_source, "unsafe member name (path traversal '..')")
    if not parts:
        raise ResultsImportError(member_source, "empty member name")
    return "/".join(parts)


def _read_zip(handle: IO[bytes], limits: _Limits) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(handle)
    except zipfile.BadZipFile as exc:
        raise ResultsImportError(limits.source, f"not a valid zip archive ({exc})") from exc
    members: dict[str, bytes] = {}
    with archive:
        for info in archive.infolist():
            name = safe_member_name(info.filename, limits.source)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise ResultsImportError(limits.where(name), "symbolic links are not allowed")
            if info.is_dir():
                continue
            limits.admit(name, info.file_size, members)
            with archive.open(info) as stream:
                members[name] = limits.read(name, stream)
    return members


def _open_tar(handle: IO[bytes], limits: _Limits) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=handle, mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ResultsImportError(limits.source, "not a zip or tar archive") from exc


def _read_tar(handle: IO[bytes], limits: _Limits) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with _open_tar(handle, limits) as archive:
        for info in _tar_members(archive, limits):
            name = safe_member_name(info.name, limits.source)
            if info.issym() or info.islnk():
                raise ResultsImportError(limits.where(name), "links are not allowed")
            if info.isdir():
                continue
            if not info.isfile():
                raise ResultsImportError(limits.where(name), "special files are not allowed")
            limits.admit(name, info.size, members)
            stream = archive.extractfile(info)
            if stream is None:
                raise ResultsImportError(limits.where(name), "cannot read member")
            members[name] = limits.read(name, stream)
    return members


def _tar_members(archive: tarfile.TarFile, limits: _Limits) -> Iterator[tarfile.TarInfo]:
    """Iterate tar headers lazily, reporting a corrupt stream as an import error."""
    try:
        yield from archive
    except (tarfile.TarError, EOFError, OSError, io.UnsupportedOperation) as exc:
        raise ResultsImportError(limits.source, f"corrupt tar archive ({exc})") from exc


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
