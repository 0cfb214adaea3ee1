"""The retrieval dashboard and API: who may read, the stored leaderboard (two-stage average, deltas, filters),
curves as SVG, and a real Celery worker computing the evaluation."""
from __future__ import annotations

import time

import pytest
from django.test import Client
from rest_framework.test import APIClient

from agreement.retrieval.evaluations import AVERAGE, run_evaluation, table
from agreement.retrieval.models import Evaluation, PoolUnit, Ranking
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.retrieval_helpers import judged_collection


@pytest.mark.django_db
def test_annotators_never_see_collections_or_scores(alice) -> None:
    judged_collection()
    client = Client()
    client.force_login(alice.user)
    assert client.get("/retrieval/").status_code == 403
    assert client.get("/retrieval/MiniFact/").status_code == 403
    api = APIClient()
    api.force_authenticate(alice.user)
    assert api.get("/api/v1/retrieval/collections/").status_code == 403


@pytest.mark.django_db
def test_the_dashboard_shows_the_stored_leaderboard_with_deltas_and_curves(dave) -> None:
    judged_collection()
    Evaluation.objects.create(collection_id=Ranking.objects.first().collection_id)
    assert run_evaluation(Ranking.objects.first().collection_id, claimed_by="test") == "computed"
    assert run_evaluation(Ranking.objects.first().collection_id, claimed_by="again") == "not claimed"
    client = Client()
    client.force_login(dave)
    page = client.get("/retrieval/MiniFact/", {"metric": "ndcg@5", "baseline": "elsewhere", "subset": "en"})
    html = page.content.decode()
    assert page.status_code == 200
    assert '<th class="num">average of judges</th>' in html and "judge:judge-a" in html and "<svg" in html
    assert "(+0.0000)" in html  # the baseline's own delta
    assert "<th>Method</th>" in html and "<td>imported TREC run</td>" in html  # the rankings panel's method column
    judges = Evaluation.objects.get().judges["en"]
    units = PoolUnit.objects.count()
    assert [(p["a"], p["b"], p["pairs"]) for p in judges["pairwise"]] == [("judge-a", "judge-b", units)]
    assert sum(judges["distributions"]["judge-a"]) == PoolUnit.objects.count()
    assert "Krippendorff's α (interval)" in html
    rows = Evaluation.objects.get().rows
    board = table(rows, metric="ndcg@5", baseline="elsewhere", subset="en")
    a, b = (board["values"][f"judge:judge-{x}"] for x in "ab")
    for ranking in ("elsewhere", "second"):
        assert board["values"][AVERAGE][ranking] == pytest.approx((a[ranking] + b[ranking]) / 2)
        assert board["deltas"][AVERAGE][ranking] == pytest.approx(board["values"][AVERAGE][ranking] -
                                                              board["values"][AVERAGE]["elsewhere"])
    assert board["rankings"] == sorted(board["rankings"], key=lambda r: -board["values"][AVERAGE][r])
    bad = client.get("/retrieval/MiniFact/", {"metric": "ndcg@500"})
    assert "unknown metric" in bad.content.decode()
    api = APIClient()
    api.force_authenticate(dave)
    listed = api.get("/api/v1/retrieval/collections/").json()
    assert listed[0]["name"] == "MiniFact" and [s["documents"] for s in listed[0]["subsets"]] == [6, 10]
    stored = api.get("/api/v1/retrieval/collections/MiniFact/evaluation/").json()
    assert stored["status"] == "done" and len(stored["rows"]) == len(rows)
    # a ranking's method (what produced it) is `method` in the listing and in every row, never `kind`
    assert {r["method"] for r in listed[0]["rankings"]} == {r["method"] for r in stored["rows"]} == {"imported"}
    assert not any("kind" in r for r in [*listed[0]["rankings"], *stored["rows"]])


@pytest.mark.worker
@pytest.mark.postgres
def test_a_real_worker_computes_the_evaluation_once(start_worker, dave) -> None:
    judged_collection()
    start_worker()
    api = APIClient()
    api.force_authenticate(dave)
    assert api.post("/api/v1/retrieval/collections/MiniFact/evaluation/").status_code == 202
    deadline = time.monotonic() + 120
    while Evaluation.objects.get().status != "done":
        assert time.monotonic() < deadline, Evaluation.objects.get().error
        time.sleep(0.3)
    rows = Evaluation.objects.get().rows
    # two runs × (en: qrels, two judges, their mean; da: qrels only)
    assert sorted({(r["subset"], r["reference"]) for r in rows}) == [
        ("da", "qrels:test"), ("en", "judge:judge-a"), ("en", "judge:judge-b"), ("en", "judges:mean"),
        ("en", "qrels:test")]
    assert len(rows) == 10 and all(len([k for k in r if k.startswith("ndcg@")]) == 100 for r in rows)


@pytest.mark.django_db
def test_admins_can_browse_the_retrieval_tables_in_the_django_admin(carol) -> None:
    judged_collection()
    carol.is_staff = True
    carol.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(carol)
    for model in ("collection", "ranking", "pool", "evaluation"):
        assert client.get(f"/admin/retrieval/{model}/").status_code == 200, model
    assert "elsewhere" in client.get("/admin/retrieval/ranking/").content.decode()
