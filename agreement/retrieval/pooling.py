"""Pools: the union of chosen rankings' top-K per query, turned into a graded-relevance task judged pair by pair.

Why it is shaped this way (the "Beyond Binary" study's pipeline):
- Each judging unit is one (query, document) pair, one item with one document, so humans and LLM judges
  answer pointwise (one pair per request), never listwise.
- A pair's id is a hash of (query id, query text, document id, document text): re-pooling after adding a
  ranking, or with a deeper K, only adds pairs not judged yet, and every answer stays attached to its pair.
- Items are written in query order, so an LLM run (which follows item order) sends all documents of a
  query one after another and the query's shared prompt prefix stays in the provider's cache.
- Judges see no original qrels: the pool task has no gold.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from agreement.retrieval.collection_import import chunks
from agreement.retrieval.models import Document, Pool, PoolUnit, Query, Ranking, RankingEntry, Subset
from hume.lib.sql import insert_rows
from kinds.kind_registry import kind_of_mteb_type
from tasks_app.core.kinds import canonical_json
from tasks_app.models import Item, Task

HUMAN_INSTRUCTIONS = """Score how relevant the document is to the query, from 0 to 10:

- **10**: near-perfect match; the document directly and comprehensively answers the query.
- **9**: extremely relevant; substantial, directly useful information, missing only minor details.
- **8**: highly relevant; significant related content that would meaningfully help answer the query.
- **6–7**: moderately relevant; a clear connection with some useful information, but much is tangential.
- **4–5**: borderline to weakly relevant; shares a general subject area but it is unclear if it helps.
- **2–3**: barely relevant; only a superficial or incidental connection (shared keywords, another context).
- **0–1**: irrelevant; no meaningful connection to the query.

Most documents should score below 7; scores of 9–10 are rare. Do not inflate scores."""


def pair_id(query_id: str, query_text: str, doc_id: str, doc_text: str) -> str:
    """sha256 over the JSON list of the four strings: stable across runs, machines and re-pooling."""
    data = json.dumps([query_id, query_text, doc_id, doc_text], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def unit_payload(query: Query, document: Document) -> dict[str, object]:
    """What a judge sees: the query (with its instruction, if any) and one document, title first."""
    text = f"{query.text}\n{query.instruction}" if query.instruction else query.text
    return {"query": text, "documents": [{"id": document.doc_id, "text": document.full_text}],
            "query_id": query.query_id}


@dataclass
class PoolSummary:
    pool_id: int
    task: str
    created: bool
    added: int
    total: int

    def lines(self) -> list[str]:
        return [f"pool {self.pool_id} ({'new' if self.created else 'existing'}), task {self.task}: "
                f"{self.added} new pairs, {self.total} in all"]


def build_pool(subset: Subset, rankings: Sequence[Ranking], depth: int, *, task_name: str | None = None,
               step: float = 0.1) -> PoolSummary:
    """Create the subset's pool, or add to it: pairs of the rankings' top-`depth` that are not judging units yet."""
    if depth < 1:
        raise ValueError("the pool depth must be at least 1")
    foreign = [r.name for r in rankings if r.collection_id != subset.collection_id]
    if foreign or not rankings:
        raise ValueError(f"rankings of another collection: {', '.join(foreign)}" if foreign
                         else "choose at least one ranking")
    with transaction.atomic():
        pool, created = _pool(subset, depth, task_name, step)
        pool.rankings.add(*rankings)
        if depth > pool.depth:
            pool.depth = depth
            pool.save(update_fields=["depth"])
        have = set(PoolUnit.objects.filter(pool=pool).values_list("query_id", "document_id"))
        wanted = (RankingEntry.objects.filter(ranking__in=rankings, query__subset=subset, rank__lte=depth)
                  .order_by("query__query_id", "document__doc_id").values_list("query_id", "document_id").distinct())
        new = [pair for pair in wanted if pair not in have]
        added = _add_units(pool, new)
    return PoolSummary(pool.pk, pool.task.name, created, added, len(have) + added)


def _pool(subset: Subset, depth: int, task_name: str | None, step: float) -> tuple[Pool, bool]:
    existing = Pool.objects.select_for_update().filter(subset=subset).select_related("task").first()
    if existing is not None:
        return existing, False
    name = task_name or f"{subset.collection.name} {subset.name} pool"
    task = Task.objects.create(
        name=name, kind=kind_of_mteb_type("Retrieval"), language=subset.language, scale_min=0.0, scale_max=10.0,
        scale_step=step, instructions=HUMAN_INSTRUCTIONS, mteb_task_name=subset.collection.name,
        mteb_subset=subset.name)
    return Pool.objects.create(subset=subset, task=task, depth=depth), True


def _add_units(pool: Pool, pairs: list[tuple[int, int]]) -> int:
    task = pool.task
    position = (Item.objects.filter(task=task).aggregate(m=Max("position"))["m"] or 0) + 1
    prep = Item._meta.get_field("payload").get_db_prep_save
    now = Item._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
    for batch in chunks(pairs, 2000):
        queries = Query.objects.in_bulk({q for q, _ in batch})
        docs = Document.objects.in_bulk({d for _, d in batch})
        rows, units = [], []
        for query_pk, doc_pk in batch:
            query, doc = queries[query_pk], docs[doc_pk]
            payload = unit_payload(query, doc)
            uid = hashlib.sha256(canonical_json([task.name, task.kind, payload]).encode("utf-8")).hexdigest()
            pid = pair_id(query.query_id, query.text, doc.doc_id, doc.full_text)
            rows.append((task.pk, uid, pid, position, prep(payload, connection), False, now))
            units.append((uid, query_pk, doc_pk, pid))
            position += 1
        insert_rows(Item, ("task", "uid", "external_id", "position", "payload", "in_sample", "created_at"), rows)
        ids = dict(Item.objects.filter(uid__in=[u[0] for u in units]).values_list("uid", "pk"))
        PoolUnit.objects.bulk_create([PoolUnit(pool=pool, item_id=ids[uid], query_id=q, document_id=d, pair_id=pid)
                                      for uid, q, d, pid in units])
    return len(pairs)
