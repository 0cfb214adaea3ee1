"""A SAGE study uploaded from the page: a zip of the study folder (the layout `sage run --datasets` reads,
agreement/sage/datasets.py), checked whole before it is kept.

The archive is unpacked into a scratch folder next to the studies (no absolute names, no "..", no links,
at most MAX_MEMBERS files and MAX_UNPACKED_BYTES unpacked, so a zip bomb is refused before it is written),
read with `load_study` (every file, line and field checked), and only then moved under SAGE_STUDIES_DIR by
one rename, so a refused upload leaves nothing behind. Errors name the file inside the archive and its line
(`mystudy/robustness/news.jsonl:3: field 'summary': must be a non-empty string`), never a server folder.
A zip whose files sit in one top folder (what zipping a folder makes) is read from that folder.
"""
from __future__ import annotations

import re
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from agreement.sage.datasets import SageDataError, Study, load_study

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
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError):
        raise StudyUploadError(f"{filename}: not a zip archive (zip the study folder)") from None
    with archive:
        for member in _members(archive, filename):
            out = target / PurePosixPath(member.filename.replace("\\", "/"))
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(member) as source, out.open("wb") as sink:
                    shutil.copyfileobj(source, sink)
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as error:
                raise StudyUploadError(f"{filename}!{member.filename}: cannot be read ({error})") from None


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
