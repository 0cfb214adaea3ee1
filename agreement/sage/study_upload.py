"""A SAGE study uploaded from the page: a zip of the study folder (the layout `sage run --datasets` reads,
agreement/sage/datasets.py), checked whole before it is kept.

The archive is unpacked into a scratch folder next to the studies (no absolute names, no "..", no links,
at most MAX_MEMBERS files and MAX_UNPACKED_BYTES unpacked), read with `load_study` (every file, line and field
checked), and only then moved under SAGE_STUDIES_DIR by one rename, so a refused upload leaves nothing behind.
A zip bomb is refused before anything is written: the members are streamed by the archive reader of MTEB
results and collection uploads (`read_archive_members`, at most 16 MiB a file, counted while it streams,
whatever the header claims), and each file's lines are checked as dataset imports check theirs
(`read_lines`: at most MAX_IMPORT_LINE_BYTES, 1 MiB, a line, UTF-8) before it is written.
Errors name the file inside the archive and its line
(`mystudy/robustness/news.jsonl:3: field 'summary': must be a non-empty string`), never a server folder.
A zip whose files sit in one top folder (what zipping a folder makes) is read from that folder.
"""
from __future__ import annotations

import io
import re
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from agreement.results.mteb_loading import read_archive_members
from agreement.sage.datasets import SageDataError, Study, load_study
from hume.lib.import_reader import ProblemLog, read_lines
from measures.results.mteb_files import ResultsImportError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
MAX_MEMBERS = 5000
MAX_UNPACKED_BYTES = 500 * 1024 * 1024
CATEGORY_FOLDERS = ("human_preference", "robustness", "sensitivity", "clustering", "retrieval")


class StudyUploadError(ValueError):
    """An upload that is not kept, with what to fix."""


def check_name(name: str, taken: list[str]) -> str:
    name = name.strip()
    if not NAME.match(name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise StudyUploadError(f"name: {shown!r} must be 1-100 letters, digits, '-' or '_', starting with a letter "
                               "or digit")
    if name in taken:
        raise StudyUploadError(f"name: a study named {name!r} exists; choose another name")
    return name


def _members(archive: zipfile.ZipFile, filename: str) -> list[zipfile.ZipInfo]:
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise StudyUploadError(f"{filename}: {len(members)} files, over the limit of {MAX_MEMBERS}")
    if sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
        raise StudyUploadError(f"{filename}: unpacks to over {MAX_UNPACKED_BYTES // 2**20} MB")
    for member in members:
        path = PurePosixPath(member.filename.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or ":" in member.filename:
            raise StudyUploadError(f"{filename}!{member.filename}: a file name outside the study folder")
        if stat.S_ISLNK(member.external_attr >> 16):
            raise StudyUploadError(f"{filename}!{member.filename}: a symbolic link; only files and folders")
    return [m for m in members if not m.is_dir() and not PurePosixPath(m.filename).name.startswith(".")
            and "__MACOSX" not in PurePosixPath(m.filename).parts]


def _unpack(handle: IO[bytes], filename: str, target: Path) -> None:
    try:
        with zipfile.ZipFile(handle) as archive:
            wanted = {"/".join(part for part in m.filename.split("/") if part not in ("", "."))
                      for m in _members(archive, filename)}
    except (zipfile.BadZipFile, OSError):
        raise StudyUploadError(f"{filename}: not a zip archive (zip the study folder)") from None
    handle.seek(0)
    try:
        members = read_archive_members(handle, source=filename, max_total_bytes=MAX_UNPACKED_BYTES,
                                       max_members=MAX_MEMBERS)
    except ResultsImportError as error:
        raise StudyUploadError(str(error)) from None
    with members:
        for name in members:
            if name not in wanted:
                continue
            data = members[name]
            _check_lines(data, f"{filename}!{name}")
            out = target / PurePosixPath(name)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)


def _check_lines(data: bytes, where: str) -> None:
    """Refuse a member with a line over MAX_IMPORT_LINE_BYTES or a byte that is not UTF-8, naming the line."""
    log = ProblemLog(where)
    for _ in read_lines(io.BytesIO(data), log, stop_on_problem=True):
        pass
    if log:
        raise StudyUploadError(str(log.problems[0]))


def study_root(folder: Path) -> Path:
    """The folder holding the category folders: the unpacked folder, or its one top folder."""
    if any((folder / c).is_dir() for c in CATEGORY_FOLDERS):
        return folder
    inside = [p for p in folder.iterdir() if p.is_dir()]
    files = [p for p in folder.iterdir() if p.is_file()]
    if len(inside) == 1 and not files:
        return inside[0]
    return folder


def keep_upload(handle: IO[bytes], filename: str, name: str, studies: Path, taken: list[str]) -> Study:
    """Check the zip and its study; keep it as studies/<name>. StudyUploadError or SageDataError, nothing kept."""
    name = check_name(name, taken)
    studies.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".upload-", dir=studies))
    try:
        _unpack(handle, filename, scratch / name)
        root = study_root(scratch / name)
        try:
            study = load_study(root)
        except SageDataError as error:
            raise error.relative_to(root) from None
        root.rename(studies / name)
    except FileExistsError:
        raise StudyUploadError(f"name: a study named {name!r} exists; choose another name") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return study
