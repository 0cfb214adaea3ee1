"""Importing a retrieval collection subset in the BEIR / MTEB layout, streaming and atomic.

The layout: ``corpus.jsonl`` (``_id``, ``text``, optional ``title``), ``queries.jsonl`` (``_id``, ``text``,
optional ``instruction``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``; a header line is
optional, and TREC qrels lines ``qid 0 docid relevance`` are read too). Files are read line by line with
the item importer's reader, rows go to the database in chunks, and duplicate or unknown ids are found with
one indexed query per chunk: memory stays bounded by the chunk, not by the corpus. Any problem rolls the
whole subset back and is reported with file, line and field.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction

from agreement.retrieval.models import Collection, Document, Qrel, Query, Subset
from hume.lib.import_reader import ImportFailed, ImportProblem, ProblemLog, iter_jsonl, read_lines
from hume.lib.sql import insert_rows

CHUNK = 5000
T = TypeVar("T")


@dataclass
class CollectionSummary:
    collection: str
    subset: str
    language: str
    created_collection: bool
    documents: int = 0
    queries: int = 0
    qrels: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        splits = ", ".join(f"{split}: {n}" for split, n in sorted(self.qrels.items())) or "none"
        return [f"collection {self.collection} subset {self.subset} ({self.language})"
                f"{' (new collection)' if self.created_collection else ''}",
                f"documents: {self.documents}", f"queries: {self.queries}", f"qrels: {splits}"]


def chunks(rows: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    batch: list[T] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def text_id(value: Any) -> str | None:
    """BEIR ids are strings, but some dumps write numbers: accept both, refuse anything else."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    return text if text and len(text) <= 200 else None


def import_collection(directory: Path, *, name: str, language: str, subset: str | None = None,
                      source: str | None = None) -> CollectionSummary:
    """Import one subset of collection `name` from `directory`; atomic, ImportFailed lists every problem.
    `source` names the folder in problems (an upload's temporary folder is no name for its sender)."""
    subset_name = subset or language
    corpus, queries = directory / "corpus.jsonl", directory / "queries.jsonl"
    missing = [p.name for p in (corpus, queries) if not p.is_file()]
    if missing:
        raise ImportFailed([ImportProblem(source or str(directory), None, None,
                                          f"no {', '.join(missing)} in the folder "
                                          "(BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv)")])
    qrel_files = sorted((directory / "qrels").glob("*.tsv")) if (directory / "qrels").is_dir() else []
    with transaction.atomic():
        target, created = _subset(name, language, subset_name, source or str(directory))
        summary = CollectionSummary(name, subset_name, language, created)
        with corpus.open("rb") as stream:
            summary.documents = import_documents(target, stream, "corpus.jsonl")
        with queries.open("rb") as stream:
            summary.queries = import_queries(target, stream, "queries.jsonl")
        for path in qrel_files:
            with path.open("rb") as stream:
                summary.qrels[path.stem] = import_qrels(target, stream, f"qrels/{path.name}", split=path.stem)
    return summary


def _subset(name: str, language: str, subset_name: str, where: str) -> tuple[Subset, bool]:
    log = ProblemLog(where)
    for row, exclude in ((Collection(name=name), []), (Subset(name=subset_name, language=language), ["collection"])):
        try:
            row.clean_fields(exclude=exclude)
        except ValidationError as exc:  # say which option is wrong
            for option, errors in exc.message_dict.items():
                log.add(None, option, "; ".join(errors))
    log.raise_if_any()
    collection, created = Collection.objects.select_for_update().get_or_create(name=name)
    if Subset.objects.filter(collection=collection, name=subset_name).exists():
        log.add(None, "subset", f"collection {name!r} already has a subset {subset_name!r}; nothing was imported "
                                "(import another subset, or delete this one first)")
        log.raise_if_any()
    return Subset.objects.create(collection=collection, name=subset_name, language=language), created


def _jsonl_rows(stream: BinaryIO, log: ProblemLog, optional: str) -> Iterator[tuple[int, str, str, str]]:
    """(line, _id, text, optional field) per valid line; problems are logged with line and field."""
    for line, record in iter_jsonl(stream, log):
        rid = text_id(record.get("_id"))
        if rid is None:
            log.add(line, "_id", "is missing" if record.get("_id") in (None, "") else
                    "must be a string or a number of at most 200 characters")
            continue
        text, extra = record.get("text"), record.get(optional, "")
        if not isinstance(text, str):
            log.add(line, "text", "is missing" if text is None else "must be a string")
            continue
        if extra is None:
            extra = ""
        if not isinstance(extra, str):
            log.add(line, optional, "must be a string")
            continue
        if "\x00" in text or "\x00" in extra:
            log.add(line, "text", "contains a NUL character, which the database cannot store")
            continue
        yield line, rid, text, extra


def _new_ids(model: type[Document] | type[Query], id_field: str, subset: Subset, batch: list[Any],
             log: ProblemLog, noun: str) -> list[Any]:
    """Rows of the batch whose id is new: not earlier in the batch, not already stored (reported with lines)."""
    stored = dict(model.objects.filter(subset=subset, **{f"{id_field}__in": [r[1] for r in batch]})
                  .values_list(id_field, "line"))
    fresh, first_line = [], {}
    for row in batch:
        earlier = stored.get(row[1]) or first_line.get(row[1])
        if earlier:
            log.add(row[0], "_id", f"duplicate {noun} id {row[1]!r} (first on line {earlier})")
            continue
        first_line[row[1]] = row[0]
        fresh.append(row)
    return fresh


def import_documents(subset: Subset, stream: BinaryIO, filename: str) -> int:
    log, count = ProblemLog(filename), 0
    for batch in chunks(_jsonl_rows(stream, log, "title")):
        fresh = _new_ids(Document, "doc_id", subset, batch, log, "document")
        if not log:
            insert_rows(Document, ("subset", "doc_id", "title", "text", "line"),
                        [(subset.pk, did, title, text, line) for line, did, text, title in fresh])
            count += len(fresh)
        if log.full:
            break
    if not count and not log:
        log.add(None, None, "the corpus has no documents")
    log.raise_if_any()
    return count


def import_queries(subset: Subset, stream: BinaryIO, filename: str) -> int:
    log, count = ProblemLog(filename), 0
    for batch in chunks(_jsonl_rows(stream, log, "instruction")):
        fresh = _new_ids(Query, "query_id", subset, batch, log, "query")
        if not log:
            insert_rows(Query, ("subset", "query_id", "text", "instruction", "line"),
                        [(subset.pk, qid, text, instruction, line) for line, qid, text, instruction in fresh])
            count += len(fresh)
        if log.full:
            break
    if not count and not log:
        log.add(None, None, "the file has no queries")
    log.raise_if_any()
    return count


def iter_qrels(stream: BinaryIO, log: ProblemLog) -> Iterator[tuple[int, str, str, float]]:
    """(line, query id, doc id, relevance) from BEIR TSV (optional header) or TREC qrels lines."""
    for line in read_lines(stream, log):
        text = line.text.strip()
        if not text:
            continue
        cells = text.split("\t") if "\t" in text else text.split()
        if line.number == 1 and cells[0].strip().lower() in {"query-id", "query_id", "qid"}:
            continue
        if len(cells) == 4:  # TREC: qid iteration docid relevance
            cells = [cells[0], cells[2], cells[3]]
        if len(cells) != 3:
            log.add(line.number, None, f"has {len(cells)} columns; a qrels line is query-id, corpus-id, score "
                                       "(tab-separated) or TREC's qid 0 docid relevance")
            continue
        qid, did, raw = (c.strip() for c in cells)
        try:
            relevance = float(raw)
        except ValueError:
            log.add(line.number, "score", f"{raw!r} is not a number")
            continue
        if relevance != relevance or relevance in (float("inf"), float("-inf")):
            log.add(line.number, "score", f"{raw!r} is not a finite number")
            continue
        yield line.number, qid, did, relevance


def import_qrels(subset: Subset, stream: BinaryIO, filename: str, *, split: str) -> int:
    log, count, seen = ProblemLog(filename), 0, {}
    for batch in chunks(iter_qrels(stream, log)):
        queries = dict(Query.objects.filter(subset=subset, query_id__in={r[1] for r in batch})
                       .values_list("query_id", "pk"))
        docs = dict(Document.objects.filter(subset=subset, doc_id__in={r[2] for r in batch})
                    .values_list("doc_id", "pk"))
        rows = []
        for line, qid, did, relevance in batch:
            if qid not in queries:
                log.add(line, "query-id", f"unknown query {qid!r}: not in queries.jsonl")
            elif did not in docs:
                log.add(line, "corpus-id", f"unknown document {did!r}: not in corpus.jsonl")
            elif (key := (queries[qid], docs[did])) in seen:
                log.add(line, "corpus-id", f"query {qid!r} judges document {did!r} twice (first on line {seen[key]})")
            else:
                seen[key] = line
                rows.append((subset.pk, split, key[0], key[1], relevance))
        if not log:
            insert_rows(Qrel, ("subset", "split", "query", "document", "relevance"), rows)
            count += len(rows)
        if log.full:
            break
    log.raise_if_any()
    return count
