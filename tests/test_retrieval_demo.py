"""The demo's retrieval study: after load_demo and demo_retrieval the demo collection is ranked by BM25 and the
shipped MiniLM, pooled, judged by two demo people and an LLM judge, and evaluated, so the page draws curves."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from agreement.retrieval.demo_collection import COLLECTION, DEPTH
from agreement.retrieval.models import Collection, Evaluation, PoolUnit, RankingEntry
from annotation.models import Annotation, BatchAssignee
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)

pytestmark = pytest.mark.django_db


def load() -> str:
    out = StringIO()
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=StringIO())
    call_command("demo_retrieval", stdout=out)
    return out.getvalue()


def test_the_demo_collection_is_ranked_pooled_judged_and_evaluated_with_curves_on_its_page() -> None:
    output = load()
    collection = Collection.objects.get(name=COLLECTION)
    subset = collection.subsets.get()
    assert (subset.documents.count(), subset.queries.count(), subset.qrels.count()) == (30, 5, 20)
    rankings = {r.name: r for r in collection.rankings.all()}
    assert sorted(rankings) == ["all-MiniLM-L6-v2", "bm25"] and all(r.status == "done" for r in rankings.values())
    assert RankingEntry.objects.filter(ranking=rankings["all-MiniLM-L6-v2"]).count() == 5 * 10  # 5 queries, k = 10
    units = PoolUnit.objects.filter(pool__subset=subset)
    # the pool is the union of both runs' top 5 per query
    wanted = set(RankingEntry.objects.filter(ranking__collection=collection, rank__lte=DEPTH)
                 .values_list("query_id", "document_id"))
    assert set(units.values_list("query_id", "document_id")) == wanted and 25 <= len(wanted) <= 50
    answers = Annotation.objects.filter(item__retrieval_unit__pool__subset=subset)
    assert set(answers.values_list("annotator__user__username", flat=True)) == {"demo-judge", "hana", "ivan"}
    assert answers.count() == 3 * len(wanted)
    pool = units.first().pool
    assignees = BatchAssignee.objects.filter(batch__task=pool.task)
    assert set(assignees.values_list("annotator__user__username", flat=True)) >= {"alice", "bob"}  # English
    evaluation = Evaluation.objects.get(collection=collection)
    assert evaluation.status == "done"
    assert sorted({r["reference"] for r in evaluation.rows}) == ["humans", "judge:demo-judge", "qrels:test"]
    # every query has a relevant document in both runs' top 10 (the texts share the query's words)
    by = {(r["ranking"], r["reference"]): r for r in evaluation.rows}
    assert by["bm25", "qrels:test"]["queries"] == 5 and 0 < by["bm25", "qrels:test"]["ndcg@10"] <= 1
    assert by["all-MiniLM-L6-v2", "qrels:test"]["recall@10"] == pytest.approx(1.0)
    client = Client()
    client.login(username="dave", password="hume-demo")
    html = client.get(f"/retrieval/{COLLECTION}/").content.decode()
    assert "<svg" in html and "all-MiniLM-L6-v2" in html and "judge:demo-judge" in html
    assert f"collection {COLLECTION}: 2 rankings, evaluation done" in output


def test_loading_the_demo_study_twice_changes_nothing() -> None:
    load()
    counts = (RankingEntry.objects.count(), PoolUnit.objects.count(), Annotation.objects.count())
    digest = Evaluation.objects.get().digest
    output = load()
    assert (RankingEntry.objects.count(), PoolUnit.objects.count(), Annotation.objects.count()) == counts
    assert "0 new pairs" in output and "judgments: 0 added" in output and Evaluation.objects.get().digest == digest
