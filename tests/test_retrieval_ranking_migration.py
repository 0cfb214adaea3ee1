"""The migration that renames the retrieval Run to Ranking (retrieval 0007, issue 21 item 5) keeps every row:
tables and columns are renamed in place, stored evaluation rows name their ranking under "ranking", and a BM25
ranking a worker was writing under the old claim joins the job layer with a lapsed lease (so the beat sends
it again) and the page's default k. Run on PostgreSQL, from the schema before to the schema after."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("retrieval", "0006_job_layer")]
AFTER = [("retrieval", "0007_ranking")]


def migrate(targets: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


def test_the_rename_keeps_rankings_entries_and_evaluation_rows() -> None:
    old = migrate(BEFORE)
    try:
        collection = old.get_model("retrieval", "Collection").objects.create(name="Kept")
        subset = old.get_model("retrieval", "Subset").objects.create(collection=collection, name="en", language="eng")
        document = old.get_model("retrieval", "Document").objects.create(subset=subset, doc_id="d1", text="t", line=1)
        query = old.get_model("retrieval", "Query").objects.create(subset=subset, query_id="q1", text="q", line=1)
        Run = old.get_model("retrieval", "Run")
        imported = Run.objects.create(collection=collection, name="elsewhere", kind="imported", depth=1,
                                      status="done")
        writing = Run.objects.create(collection=collection, name="bm25", kind="bm25", status="running")
        old.get_model("retrieval", "RunEntry").objects.create(run=imported, query=query, document=document, rank=1,
                                                              score=0.5)
        old.get_model("retrieval", "Evaluation").objects.create(
            collection=collection, status="done", rows=[{"run": "elsewhere", "subset": "en", "ndcg@10": 1.0}])

        new = migrate(AFTER)

        Ranking = new.get_model("retrieval", "Ranking")
        kept = Ranking.objects.get(pk=imported.pk)
        assert (kept.name, kept.kind, kept.status, kept.depth) == ("elsewhere", "imported", "done", 1)
        entry = new.get_model("retrieval", "RankingEntry").objects.get()
        assert (entry.ranking_id, entry.query_id, entry.document_id, entry.rank) == (imported.pk, query.pk,
                                                                                      document.pk, 1)
        assert new.get_model("retrieval", "Evaluation").objects.get().rows == [
            {"ranking": "elsewhere", "subset": "en", "ndcg@10": 1.0}]
        bm25 = Ranking.objects.get(pk=writing.pk)
        assert (bm25.status, bm25.k, bm25.attempts) == ("running", 100, 1)
        assert bm25.lease_expires_at is not None  # lapsed: the job layer's beat sends it to a worker again
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_kind_becomes_method_and_keeps_the_rankings_and_the_evaluation_rows() -> None:
    """retrieval 0008 (issue 38 item 5): the column is renamed in place and the stored rows say "method"."""
    old = migrate(AFTER)
    try:
        collection = old.get_model("retrieval", "Collection").objects.create(name="Kept")
        ranking = old.get_model("retrieval", "Ranking").objects.create(collection=collection, name="bm25",
                                                                         kind="bm25", status="done", depth=3)
        old.get_model("retrieval", "Evaluation").objects.create(
            collection=collection, status="done", rows=[{"ranking": "bm25", "kind": "bm25", "ndcg@10": 0.5}])

        new = migrate([("retrieval", "0008_ranking_method")])

        kept = new.get_model("retrieval", "Ranking").objects.get(pk=ranking.pk)
        assert (kept.name, kept.method, kept.status, kept.depth) == ("bm25", "bm25", "done", 3)
        assert new.get_model("retrieval", "Evaluation").objects.get().rows == [
            {"ranking": "bm25", "method": "bm25", "ndcg@10": 0.5}]

        back = migrate(AFTER)  # and backwards: the rows say "kind" again
        assert back.get_model("retrieval", "Evaluation").objects.get().rows == [
            {"ranking": "bm25", "kind": "bm25", "ndcg@10": 0.5}]
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
