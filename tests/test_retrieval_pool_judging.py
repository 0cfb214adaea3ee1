"""A pool of runs' top-K judged pointwise by three LLM judges on a real local server and by a human in the loop
API, then every run scored against each reference — checked against pytrec_eval on the same data.

The end-to-end test is the issue's "done when": the MiniFact collection (two subsets) → a BM25 run, a run of the
shipped all-MiniLM-L6-v2 and an imported TREC run → a pool at depth 10 → three scripted judges and a human →
every nDCG@k, Recall@k (k = 1…100) and MAP of every run on both subsets equal to pytrec_eval's."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from io import StringIO

import numpy as np
import pytest
import pytrec_eval
from django.core.management import call_command
from rest_framework.test import APIClient

from agreement.retrieval.evaluation_inputs import evaluate_collection, judge_usage
from agreement.retrieval.models import Collection, PoolUnit, Ranking, RankingEntry, Subset
from agreement.retrieval.pooling import build_pool, pair_id
from annotation.core.batches import BatchSpec, create_batch
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotation
from kinds.graded_relevance.prompt import POINTWISE_PROMPT
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.llm_helpers import API_KEY_ENV, make_judge
from tests.llm_server import ChatServer, Seen
from tests.retrieval_helpers import FIXTURES, load_minifact, load_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_llm_endpoints")]
KS = list(range(1, 101))


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-test-retrieval")


def judge_score(seen: Seen, judge: int) -> float:
    """A scripted judge: a deterministic 0–10 score with one decimal from the query and the document."""
    system, user = seen.body["messages"][0]["content"], seen.body["messages"][1]["content"]
    digest = hashlib.sha256(f"{judge}|{system}|{user}".encode()).digest()
    return round(digest[0] / 255 * 10, 1)


def study_reply(seen: Seen) -> str:
    judge = int(seen.body["model"][-1])
    return json.dumps({"reasoning": "The document shares the topic but not the claim.",
                       "score": judge_score(seen, judge)})


def run_to_end(run_id: int) -> None:
    for _ in range(50):
        if execute_run(run_id) != "continue":
            return
    raise AssertionError("the run never finished")


@pytest.fixture
def pooled() -> Subset:
    load_minifact()
    load_run("elsewhere")
    load_run("second", path=FIXTURES / "minifact-run-2.trec")
    subset = Subset.objects.get(name="en")
    build_pool(subset, list(Ranking.objects.all()), depth=3)
    return subset


@pytest.fixture
def pipeline() -> Subset:
    """MiniFact with BM25, MiniLM and an imported TREC run, the English subset pooled at depth 10."""
    load_minifact()
    load_run("elsewhere")
    call_command("bm25_run", "MiniFact", "--name", "bm25", "--k", "10", stdout=StringIO())
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    call_command("embedding_run", "MiniFact", "--model", "minilm", "--k", "10", stdout=StringIO())
    assert sorted(Ranking.objects.values_list("name", "method")) == [
        ("bm25", "bm25"), ("elsewhere", "imported"), ("minilm", "embedding")]
    subset = Subset.objects.get(name="en")
    build_pool(subset, list(Ranking.objects.all()), depth=10)
    return subset


def test_a_pool_is_the_union_of_the_runs_top_k_with_deterministic_pair_ids(pooled: Subset) -> None:
    expected = set(RankingEntry.objects.filter(query__subset=pooled, rank__lte=3)
                   .values_list("query_id", "document_id"))
    units = PoolUnit.objects.filter(pool__subset=pooled).select_related("query", "document", "item")
    assert {(u.query_id, u.document_id) for u in units} == expected
    unit = units.get(query__query_id="5", document__doc_id="7912")
    text = "BC1 RNA, the transcript from a master gene for ID element amplification ID elements are short " \
           "interspersed elements found in high copy number in many rodent genomes. BC1 RNA is a neural transcript."
    assert unit.pair_id == unit.item.external_id == pair_id("5", "Aspirin lowers the risk of colorectal cancer.",
                                                            "7912", text)
    assert unit.item.payload == {"query": "Aspirin lowers the risk of colorectal cancer.", "query_id": "5",
                                 "documents": [{"id": "7912", "text": text}]}
    order = [u.item.payload["query_id"] for u in units.order_by("item__position")]
    assert order == sorted(order)  # query by query: the judge's cached prefix is reused


def test_pooling_again_deeper_adds_only_the_new_pairs(pooled: Subset) -> None:
    before = dict(PoolUnit.objects.values_list("pair_id", "item_id"))
    summary = build_pool(pooled, list(Ranking.objects.all()), depth=4)
    after = dict(PoolUnit.objects.values_list("pair_id", "item_id"))
    deeper = set(RankingEntry.objects.filter(query__subset=pooled, rank__lte=4).values_list("query_id", "document_id"))
    assert summary.added == len(deeper) - len(before) > 0 and len(after) == len(deeper)
    assert all(after[p] == item for p, item in before.items())
    assert build_pool(pooled, list(Ranking.objects.all()), depth=4).added == 0


def test_three_judges_and_a_human_score_every_run_like_pytrec_eval(pipeline: Subset, alice) -> None:
    task = pipeline.pools.get().task
    units = PoolUnit.objects.filter(pool__subset=pipeline).count()
    assert units == len(set(RankingEntry.objects.filter(query__subset=pipeline, rank__lte=10)
                            .values_list("query_id", "document_id")))
    with ChatServer(content_for=study_reply) as server:
        judges = [make_judge(f"judge-{j}", server.base_url, model=f"model-{j}", max_concurrency=4)
                  for j in (1, 2, 3)]
        for judge in judges:
            run_to_end(create_run(judge.annotator, task=task).pk)
        assert server.count == 3 * units  # one request per pair per judge
        first = server.seen[0].body["messages"]
        assert first[0]["content"].startswith(POINTWISE_PROMPT) and "<<<QUERY" in first[0]["content"]
        assert first[1]["content"].startswith("<<<DOCUMENT")
        for judge in judges:  # idempotent: a second run buys nothing
            run_to_end(create_run(judge.annotator, task=task).pk)
        assert server.count == 3 * units
    human_answers(alice, task)
    usage = judge_usage(pipeline)
    assert [(u["judge"], u["requests"], u["prompt_tokens"]) for u in usage] == [
        (f"judge-{j}", units, 100 * units) for j in (1, 2, 3)]

    rows = evaluate_collection(Collection.objects.get(), thresholds={"*": 6.5})
    references = {r.reference for r in rows if r.subset == "en"}
    assert references == {"qrels:test", "judge:judge-1", "judge:judge-2", "judge:judge-3", "judges:mean", "humans"}
    assert {(r.ranking, r.subset) for r in rows} == {(ranking, subset) for ranking in ("bm25", "elsewhere", "minilm")
                                                 for subset in ("en", "da")}
    checked = 0
    for row in rows:
        subset = Subset.objects.get(name=row.subset)
        scale = 1 if row.reference.startswith("qrels") else 30 if row.reference == "judges:mean" else 10
        qrels = reference_qrels(row.reference, subset, scale)
        level = 1 if scale == 1 else round(6.5 * scale)  # the threshold on pytrec_eval's integer scale
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut." + ",".join(map(str, KS)),
                                                           "recall." + ",".join(map(str, KS)), "map"},
                                                   relevance_level=level).evaluate(trec_runs(subset)[row.ranking])
        for k in KS:
            assert row.scores.at("ndcg", k) == pytest.approx(np.mean([s[f"ndcg_cut_{k}"] for s in per_query.values()]))
            assert row.scores.at("recall", k) == pytest.approx(np.mean([s[f"recall_{k}"] for s in per_query.values()]))
        assert row.scores.map == pytest.approx(np.mean([s["map"] for s in per_query.values()]))
        checked += 1
    assert checked == 3 * 6 + 3  # three runs × six references on en, × the qrels on da


def human_answers(alice, task) -> None:
    """Alice scores every pair through the loop API: the document's length decides her score."""
    batch, _ = create_batch(BatchSpec(task=task, overlap=1, name="humans"), annotators=[alice])
    client = APIClient()
    client.force_authenticate(alice.user)
    while True:
        response = client.get(f"/api/v1/batches/{batch.pk}/next/")
        if response.status_code == 204:  # nothing left for alice
            break
        item = response.json()["item"]
        doc = item["payload"]["documents"][0]
        value = {doc["id"]: float(len(doc["text"]) % 11)}
        response = client.post(f"/api/v1/batches/{batch.pk}/items/{item['id']}/answer/", {"value": value},
                               format="json")
        assert response.status_code in (200, 201), response.content
    assert Annotation.objects.filter(annotator=alice).count() == PoolUnit.objects.count()


def trec_runs(subset: Subset) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for ranking, qid, did, score in RankingEntry.objects.filter(query__subset=subset).values_list(
            "ranking__name", "query__query_id", "document__doc_id", "score"):
        out[ranking][qid][did] = score
    return {r: dict(q) for r, q in out.items()}


def reference_qrels(reference: str, subset: Subset, scale: int) -> dict[str, dict[str, int]]:
    """The reference rebuilt from the stored answers as pytrec_eval's integer qrels: one-decimal scores ×10,
    the mean of three judges ×30 (nDCG does not change when every gain is multiplied by one number)."""
    if reference.startswith("qrels"):
        from agreement.retrieval.models import Qrel
        qrels: dict[str, dict[str, int]] = defaultdict(dict)
        for qid, did, rel in Qrel.objects.filter(subset=subset).values_list("query__query_id", "document__doc_id",
                                                                          "relevance"):
            qrels[qid][did] = int(rel)
        return dict(qrels)
    answers = Annotation.objects.filter(item__retrieval_unit__pool__subset=subset)
    if reference.startswith("judge:"):
        answers = answers.filter(annotator__user__username=reference[6:])
    else:
        answers = answers.filter(annotator__agent="llm" if reference == "judges:mean" else "human")
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for qid, did, value in answers.values_list("item__retrieval_unit__query__query_id",
                                               "item__retrieval_unit__document__doc_id", "value"):
        scores[qid, did].append(value[did])
    qrels = defaultdict(dict)
    for (qid, did), values in scores.items():
        qrels[qid][did] = round(float(np.mean(values)) * scale)
    return dict(qrels)
