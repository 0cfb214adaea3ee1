"""Rankings: TREC run files imported for systems ranking elsewhere, and rankings made here, stored the same way.

A TREC run line is ``qid Q0 docid rank score tag``. Like trec_eval, the app orders a query's documents by
score (descending), ties by document id (descending), and ignores the file's rank column beyond checking
it is a number; the stored rank is that order, so every evaluation sees what trec_eval would.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from django.db import connection, transaction

from agreement.retrieval.collection_import import chunks
from agreement.retrieval.models import Collection, Document, Query, Ranking, RankingEntry, Subset
from hume.lib.import_reader import ImportFailed, ImportProblem, ProblemLog, read_lines
from hume.lib.sql import insert_rows


@dataclass
class RankingSummary:
    ranking: str
    collection: str
    queries: int
    entries: int
    depth: int

    def lines(self) -> list[str]:
        return [f"ranking {self.ranking} on collection {self.collection}: {self.queries} queries, "
                f"{self.entries} ranked documents, depth {self.depth}"]


def iter_trec_run(stream: BinaryIO, log: ProblemLog) -> Iterator[tuple[int, str, str, float, str]]:
    """(line, query id, doc id, score, tag) per valid line of a TREC run file."""
    for line in read_lines(stream, log):
        text = line.text.strip()
        if not text:
            continue
        cells = text.split()
        if len(cells) != 6:
            log.add(line.number, None, f"has {len(cells)} columns; a run line is: qid Q0 docid rank score tag")
            continue
        qid, _, did, rank, raw_score, tag = cells
        try:
            int(rank)
        except ValueError:
            log.add(line.number, "rank", f"{rank!r} is not a whole number")
            continue
        try:
            score = float(raw_score)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            log.add(line.number, "score", f"{raw_score!r} is not a finite number")
            continue
        yield line.number, qid, did, score, tag


class Resolver:
    """Maps a file's query and document ids to rows of the collection (one indexed query per chunk)."""

    def __init__(self, collection: Collection, subset: Subset | None) -> None:
        self.subsets = [subset] if subset else list(collection.subsets.all())
        self.subset_ids = [s.pk for s in self.subsets]

    def queries(self, ids: set[str]) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = {}
        for qid, pk, subset_id in Query.objects.filter(subset_id__in=self.subset_ids, query_id__in=ids).values_list(
                "query_id", "pk", "subset_id"):
            found.setdefault(qid, []).append((pk, subset_id))
        return found

    def documents(self, ids: set[str]) -> dict[tuple[int, str], int]:
        rows = Document.objects.filter(subset_id__in=self.subset_ids, doc_id__in=ids).values_list(
            "subset_id", "doc_id", "pk")
        return {(subset_id, did): pk for subset_id, did, pk in rows}


def import_ranking(stream: BinaryIO, filename: str, *, collection: str, name: str, subset: str | None = None,
               method: str = Ranking.Method.IMPORTED) -> RankingSummary:
    """Import a TREC run file as ranking `name` of `collection`; atomic, ImportFailed names every bad line."""
    log = ProblemLog(filename)
    with transaction.atomic():
        target, chosen = _target(collection, subset, log)
        if Ranking.objects.filter(collection=target, name=name).exists():
            log.add(None, "name", f"collection {collection!r} already has a ranking named {name!r}; choose another "
                                  "name (nothing was imported)")
        log.raise_if_any()
        ranking = Ranking.objects.create(collection=target, name=name, method=method, status=Ranking.Status.DONE)
        resolver, seen, tags = Resolver(target, chosen), {}, set()
        matched = unknown = 0
        for batch in chunks(iter_trec_run(stream, log)):
            queries = resolver.queries({r[1] for r in batch})
            docs = resolver.documents({r[2] for r in batch})
            rows = []
            for line, qid, did, score, tag in batch:
                hits = queries.get(qid, [])
                if not hits:
                    unknown += 1
                    log.add(line, "qid", f"unknown query {qid!r}: not a query of collection {collection!r}")
                    continue
                matched += 1
                if len(hits) > 1:
                    log.add(line, "qid", f"query {qid!r} is in several subsets of {collection!r}: name one "
                                         "with --subset")
                    continue
                query_pk, subset_id = hits[0]
                doc_pk = docs.get((subset_id, did))
                if doc_pk is None:
                    log.add(line, "docid", f"unknown document {did!r}: not in the corpus of query {qid!r}")
                elif (query_pk, doc_pk) in seen:
                    log.add(line, "docid", f"document {did!r} is ranked twice for query {qid!r} "
                                           f"(first on line {seen[query_pk, doc_pk]})")
                else:
                    seen[query_pk, doc_pk] = line
                    tags.add(tag)
                    rows.append((query_pk, doc_pk, score))
            if not log:
                store_entries(ranking, rows)
            if log.full:
                break
        if unknown and unknown >= matched:
            log.problems.insert(0, ImportProblem(filename, None, None, f"{unknown} of {matched + unknown} lines "
                                f"name queries that collection {collection!r} does not have: is this a ranking "
                                "of another collection?"))
        if not seen and not log:
            log.add(None, None, "the run file has no lines")
        log.raise_if_any()
        ranking.tag = ",".join(sorted(tags))[:200]
        ranking.save(update_fields=["tag"])
        depth = finish_ranking(ranking)
    return RankingSummary(name, collection, len({q for q, _ in seen}), len(seen), depth)


def _target(collection: str, subset: str | None, log: ProblemLog) -> tuple[Collection, Subset | None]:
    target = Collection.objects.filter(name=collection).first()
    if target is None:
        log.add(None, "collection", f"no collection named {collection!r}")
        log.raise_if_any()
    chosen = None
    if subset:
        chosen = Subset.objects.filter(collection=target, name=subset).first()
        if chosen is None:
            log.add(None, "subset", f"collection {collection!r} has no subset {subset!r}")
    return target, chosen


def store_entries(ranking: Ranking, rows: Iterable[tuple[int, int, float]]) -> None:
    """Insert (query pk, document pk, score) rows; ranks are set by finish_ranking once all are in."""
    insert_rows(RankingEntry, ("ranking", "query", "document", "rank", "score"),
                [(ranking.pk, q, d, 0, float(s)) for q, d, s in rows])


def finish_ranking(ranking: Ranking) -> int:
    """Rank each query's documents in trec_eval's order (score down, doc id down); returns the ranking's depth."""
    entry, doc = RankingEntry._meta.db_table, Document._meta.db_table
    byte_order = ' COLLATE "C"' if connection.vendor == "postgresql" else ""  # trec_eval compares with strcmp
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {entry} SET rank = ranked.r FROM ("
            " SELECT e.id, ROW_NUMBER() OVER (PARTITION BY e.query_id"
            f" ORDER BY e.score DESC, d.doc_id{byte_order} DESC) AS r"
            f" FROM {entry} e JOIN {doc} d ON d.id = e.document_id WHERE e.ranking_id = %s) AS ranked"
            f" WHERE {entry}.id = ranked.id", [ranking.pk])
        cursor.execute(f"SELECT COALESCE(MAX(rank), 0) FROM {entry} WHERE ranking_id = %s", [ranking.pk])
        depth = int(cursor.fetchone()[0])
    Ranking.objects.filter(pk=ranking.pk).update(depth=depth)
    ranking.depth = depth
    return depth


def refuse(filename: str, message: str) -> None:
    raise ImportFailed([ImportProblem(filename, None, None, message)])
