"""Collections uploaded through the page or the API: one .zip / .tar(.gz) of the BEIR layout, or the files.

The upload is laid out in a temporary folder and imported by `importing.import_collection`, the command's
importer: the same streaming, the same atomicity, the same problems naming file, line and field. An archive
is read by the results importer's reader, which vets every member before reading it (no absolute or `..`
names, no links or special files) and caps the member count and the expanded size; the whole upload is capped
like a results upload. Bigger corpora go through `manage.py import_collection`.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from django.core.files.uploadedfile import UploadedFile

from agreement.results.mteb_loading import read_archive_members
from agreement.results.results_import import MAX_UPLOAD_BYTES
from agreement.retrieval.collection_import import CollectionSummary, import_collection
from hume.lib.import_reader import ImportFailed, ImportProblem
from measures.results.mteb_files import ResultsImportError

SPLIT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
LAYOUT = "a .zip or .tar.gz holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv"


def refuse(file: str, message: str, field: str | None = None) -> ImportFailed:
    return ImportFailed([ImportProblem(file, None, field, message)])


def import_upload(*, name: str, language: str, subset: str | None = None, archive: UploadedFile | None = None,
                  corpus: UploadedFile | None = None, queries: UploadedFile | None = None,
                  qrels: Iterable[UploadedFile] = ()) -> CollectionSummary:
    """Import one subset from an archive or from the separate files; ImportFailed (nothing changed) otherwise."""
    qrels = list(qrels)
    sizes = sum(f.size or 0 for f in (archive, corpus, queries, *qrels) if f is not None)
    if sizes > MAX_UPLOAD_BYTES:
        raise refuse("upload", f"{sizes:,} bytes, over the {MAX_UPLOAD_BYTES:,}-byte upload limit "
                               "(import bigger collections with manage.py import_collection)")
    with tempfile.TemporaryDirectory(prefix="hume-collection-") as tmp:
        folder = Path(tmp)
        if archive is not None:
            if corpus or queries or qrels:
                raise refuse("upload", "send either an archive or the separate files, not both")
            lay_out_archive(archive, folder)
        else:
            lay_out_files(folder, corpus, queries, qrels)
        return import_collection(folder, name=name, language=language, subset=subset, source="upload")


def lay_out_files(folder: Path, corpus: UploadedFile | None, queries: UploadedFile | None,
                  qrels: list[UploadedFile]) -> None:
    missing = [field for field, f in (("corpus", corpus), ("queries", queries)) if f is None]
    if missing:
        raise ImportFailed([ImportProblem("upload", None, field, f"no {field} file: send {LAYOUT}, or corpus.jsonl "
                                          "and queries.jsonl (and qrels files named <split>.tsv)")
                            for field in missing])
    (folder / "qrels").mkdir()
    write(corpus, folder / "corpus.jsonl")
    write(queries, folder / "queries.jsonl")
    for upload in qrels:
        split = PurePosixPath(upload.name or "").stem
        if not SPLIT_NAME.fullmatch(split) or (folder / "qrels" / f"{split}.tsv").exists():
            raise refuse(upload.name or "qrels", "a qrels file is named after its split, e.g. test.tsv (letters, "
                                                 "digits, . _ -; one file per split)", "qrels")
        write(upload, folder / "qrels" / f"{split}.tsv")


def write(upload: UploadedFile, path: Path) -> None:
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)


def lay_out_archive(archive: UploadedFile, folder: Path) -> None:
    """Write the archive's corpus.jsonl, queries.jsonl and qrels/*.tsv, found under one folder of it."""
    source = archive.name or "archive"
    try:
        members = read_archive_members(archive, source=source)
    except ResultsImportError as exc:
        raise refuse(source, exc.problem) from None
    roots = {str(PurePosixPath(name).parent) for name in members if PurePosixPath(name).name == "corpus.jsonl"}
    if len(roots) != 1:
        raise refuse(source, f"{'no' if not roots else 'more than one'} corpus.jsonl in the archive: send {LAYOUT} "
                             "(one subset per upload)")
    root = PurePosixPath(roots.pop())
    (folder / "qrels").mkdir()
    for name, data in members.items():
        path = PurePosixPath(name)
        relative = path.relative_to(root) if path.is_relative_to(root) else None
        if relative is None:
            continue
        if str(relative) in ("corpus.jsonl", "queries.jsonl") or (
                relative.parent == PurePosixPath("qrels") and relative.suffix == ".tsv"
                and SPLIT_NAME.fullmatch(relative.stem)):
            (folder / relative).write_bytes(data)
