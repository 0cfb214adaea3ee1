"""Load MTEB results from disk or an upload: one TaskResult file, a results folder, a .zip / .tar.gz.

Reading only: sizes are checked before bytes are read, archive members are vetted before any is read,
and each file's bytes go to ``mteb_files.parse_task_result``, which owns the rules (docstring there).
A folder or an archive loads all or nothing: every file is checked and all problems are reported together.
Archive members are streamed in chunks to one anonymous temporary file and parsed one at a time, so memory
holds at most one member (itself capped), never the archive's expanded size.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, TypeVar

from hume.lib.json_errors import json_refusal
from measures.results.mteb_files import (
    ResultsImportError,
    ResultsImportErrors,
    ScoreRow,
    model_name_from_folder,
    parse_task_result,
)

Handle = TypeVar("Handle")

# Archive members are spooled to a temporary file in CHUNK_BYTES pieces and parsed one at a time, so memory
# holds one member at most (a 550 KB zip expanding to 500 MiB once grew the server by 580 MB); the caps bound
# that member and the disk the spool may take. A TaskResult file is a few kB; the 13 models of the HUME study
# with the human baseline are 1.4 MB in all.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 20_000
CHUNK_BYTES = 64 * 1024

MODEL_META_FILE = "model_meta.json"


# ---------------------------------------------------------------------------------------------
# Files and folders


def decode_json(raw: bytes, source: str) -> Any:
    """Decode UTF-8 JSON bytes, turning every decoding failure into a ResultsImportError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsImportError(source, f"not UTF-8 text ({exc.reason})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsImportError(
            source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except (ValueError, RecursionError) as exc:  # an over-long integer, deep nesting
        field, message = json_refusal(text, exc)
        raise ResultsImportError(source, message, key=field) from None


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
    """Load the TaskResults of a .zip or .tar(.gz) upload, all or nothing.

    Nothing is extracted to a folder (members go to one anonymous temporary file), and members are vetted
    before any is read: absolute names,
    ``..`` components, links and special files are refused, and member and total sizes are capped
    (declared sizes are checked first, actual bytes again while reading), so a hostile upload can
    neither escape a folder nor exhaust memory.
    """
    source = name or (str(archive) if isinstance(archive, str | os.PathLike) else "upload")
    with read_archive_members(
        archive,
        source=source,
        max_file_bytes=max_file_bytes,
        max_total_bytes=max_total_bytes,
        max_members=max_members,
    ) as members:
        return load_archive_members(source, members)


def load_archive_members(source: str, members: Mapping[str, bytes]) -> list[ScoreRow]:
    """Parse the JSON members already read by :func:`read_archive_members`, all or nothing.

    Public so a caller that also wants the archive's ``model_meta.json`` reads the archive once. Each
    member's bytes are fetched when it is parsed and dropped after, one member in memory at a time.
    """
    json_members = [(member, member) for member in members if member.endswith(".json")]
    return _load_members(
        source, json_members, read=members.__getitem__, describe=lambda member: f"{source}!{member}"
    )


class ArchiveMembers(Mapping[str, bytes]):
    """{member name: bytes} backed by one anonymous temporary file; a member's bytes are read on access.

    Use as a context manager (or call ``close``) to drop the file at once; the OS removes it anyway.
    """

    def __init__(self) -> None:
        self._spool = tempfile.TemporaryFile()
        self._spans: dict[str, tuple[int, int]] = {}

    def __getitem__(self, name: str) -> bytes:
        offset, length = self._spans[name]
        self._spool.seek(offset)
        return self._spool.read(length)

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def __enter__(self) -> ArchiveMembers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._spool.close()

    def add(self, name: str, stream: IO[bytes], limits: ArchiveLimits) -> None:
        """Copy a member in CHUNK_BYTES pieces, refusing it the moment it passes a cap."""
        offset = self._spool.seek(0, os.SEEK_END)
        length = 0
        while chunk := limits.read_chunk(name, stream):
            length += len(chunk)
            limits.count(name, length, len(chunk))
            self._spool.write(chunk)
        self._spans[name] = (offset, length)


def read_archive_members(
    archive: str | os.PathLike[str] | IO[bytes],
    *,
    source: str = "upload",
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_ARCHIVE_BYTES,
    max_members: int = MAX_ARCHIVE_MEMBERS,
) -> ArchiveMembers:
    """Return {safe member name: bytes} for the regular files of a .zip or .tar(.gz) archive.

    The result holds a temporary file: use it in a ``with`` block. On any error nothing is left behind.
    """
    limits = ArchiveLimits(source, max_file_bytes, max_total_bytes, max_members)
    handle = _open_binary(archive, source)
    members = ArchiveMembers()
    try:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            _read_zip(handle, limits, members)
        else:
            handle.seek(0)
            _read_tar(handle, limits, members)
    except BaseException:
        members.close()
        raise
    finally:
        if isinstance(archive, str | os.PathLike):
            handle.close()
    return members


@dataclass
class ArchiveLimits:
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

    def read_chunk(self, name: str, stream: IO[bytes]) -> bytes:
        """One chunk of a member; corrupt data becomes an import error naming the member."""
        try:
            return stream.read(CHUNK_BYTES)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
            raise ResultsImportError(self.where(name), f"corrupt member ({exc})") from exc

    def count(self, name: str, member_bytes: int, new_bytes: int) -> None:
        """Check the bytes actually read so far, whatever the header claimed."""
        if member_bytes > self.max_file_bytes:
            raise ResultsImportError(
                self.where(name), f"member is over the {self.max_file_bytes}-byte limit"
            )
        self.total += new_bytes
        if self.total > self.max_total_bytes:
            raise ResultsImportError(
                self.source, f"archive expands to more than {self.max_total_bytes} bytes"
            )


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


def _read_zip(handle: IO[bytes], limits: ArchiveLimits, members: ArchiveMembers) -> None:
    try:
        archive = zipfile.ZipFile(handle)
    except zipfile.BadZipFile as exc:
        raise ResultsImportError(limits.source, f"not a valid zip archive ({exc})") from exc
    with archive:
        for info in archive.infolist():
            name = safe_member_name(info.filename, limits.source)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise ResultsImportError(limits.where(name), "symbolic links are not allowed")
            if info.is_dir():
                continue
            limits.admit(name, info.file_size, members)
            with archive.open(info) as stream:
                members.add(name, stream, limits)


def _open_tar(handle: IO[bytes], limits: ArchiveLimits) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=handle, mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ResultsImportError(limits.source, "not a zip or tar archive") from exc


def _read_tar(handle: IO[bytes], limits: ArchiveLimits, members: ArchiveMembers) -> None:
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
            members.add(name, stream, limits)


def _tar_members(archive: tarfile.TarFile, limits: ArchiveLimits) -> Iterator[tarfile.TarInfo]:
    """Iterate tar headers lazily, reporting a corrupt stream as an import error."""
    try:
        yield from archive
    except (tarfile.TarError, EOFError, OSError, io.UnsupportedOperation) as exc:
        raise ResultsImportError(limits.source, f"corrupt tar archive ({exc})") from exc
