"""A retrieval study run from the collection's page: import a TREC run, start BM25 and model runs (for the
worker), pool runs, create the judging batch; researchers only, every refusal changes nothing and says why."""
from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.actions import rank_bm25, start_bm25_ranking
from agreement.retrieval.evaluation_inputs import evaluate_collection
from agreement.retrieval.models import Collection, Pool, PoolUnit, Ranking, RankingChunk, RankingEntry, Subset
from agreement.retrieval.pooling import build_pool
from agreement.retrieval.split_rankings import work
from agreement.retrieval.system_rankings import bm25_ranking
from annotation.llm.models import LLMRun
from annotation.models import Batch, BatchAssignee
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.llm_helpers import make_judge
from tests.retrieval_helpers import RUN_FILE, load_minifact, load_run

pytestmark = pytest.mark.django_db
PAGE = "/retrieval/MiniFact/"


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def run_file(text: str, name: str = "mine.trec") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode("utf-8"))


def entries_of(ranking: Ranking) -> list[tuple[str, int, str]]:
    return list(RankingEntry.objects.filter(ranking=ranking).order_by("query__query_id", "rank")
                .values_list("query__query_id", "rank", "document__doc_id"))


def test_annotators_may_start_nothing(alice, dave) -> None:
    load_minifact()
    load_run()
    pool = build_pool(Subset.objects.get(name="en"), list(Ranking.objects.all()), depth=1)
    client = logged_in(alice.user)
    posts = {"rankings/import/": {"trec-name": "x", "trec-run_file": run_file(RUN_FILE.read_text())},
             "rankings/bm25/": {"bm25-name": "bm25", "bm25-k": 10},
             "rankings/model/": {"model-name": "m", "model-k": 10},
             "pool/": {"pool-depth": 3}, f"pools/{pool.pool_id}/batch/": {}, "evaluate/": {}}
    for path, data in posts.items():
        assert client.post(PAGE + path, data).status_code == 403, path
    assert client.get(PAGE + "rankings/").status_code == 403
    assert (Ranking.objects.count(), Batch.objects.count(), Pool.objects.count()) == (1, 0, 1)
    assert logged_in(dave).get(PAGE + "pool/").status_code == 405  # actions are POSTs only


def test_the_page_offers_each_step_with_csrf_and_no_inline_style_or_script(dave) -> None:
    load_minifact()
    load_run()
    html = logged_in(dave).get(PAGE).content.decode()
    for form in ("import-ranking-form", "bm25-form", "model-ranking-form", "pool-form"):
        block = html[html.index(f'id="{form}"'):]
        block = block[:block.index("</form>")]
        assert 'name="csrfmiddlewaretoken"' in block, form
    assert "manage.py pool_runs" not in html
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and " style=" not in html and "<style" not in html
    assert "No registered embedding model yet" in html
    assert re.search(r'name="pool-rankings" value="\d+"[^>]*>\s*elsewhere</label>', html)  # a finished run to pool
    assert '<option value="' in html and "en (eng-Latn)</option>" in html


def test_a_trec_run_uploaded_on_the_page_is_stored_as_the_command_stores_it(dave) -> None:
    load_minifact()
    client = logged_in(dave)
    response = client.post(PAGE + "rankings/import/", {"trec-name": "uploaded",
                                                   "trec-run_file": run_file(RUN_FILE.read_text())})
    assert response.status_code == 302 and response["Location"] == PAGE
    load_run("by-command")
    uploaded, command = Ranking.objects.get(name="uploaded"), Ranking.objects.get(name="by-command")
    assert (uploaded.method, uploaded.status, uploaded.tag, uploaded.depth) == ("imported", "done", "bm25-elsewhere", 6)
    assert entries_of(uploaded) == entries_of(command) and len(entries_of(uploaded)) == 42
    page = client.get(PAGE).content.decode()
    assert "ranking uploaded on collection MiniFact: 7 queries, 42 ranked documents, depth 6" in page


def test_a_bad_trec_file_names_every_bad_line_and_stores_nothing(dave) -> None:
    load_minifact()
    text = ("1 Q0 31715 1 9.5 t\n"
            "1 Q0 31715 2 9.0 t\n"          # line 2: the same document twice
            "1 Q0 18670 x 8.0 t\n"          # line 3: rank not a number
            "1 Q0 nosuchdoc 4 7.0 t\n"      # line 4: unknown document
            "1 Q0 5836 5 7.0\n"             # line 5: five columns
            "3 Q0 5836 1 nan t\n")          # line 6: score not finite
    response = logged_in(dave).post(PAGE + "rankings/import/", {"trec-name": "bad",
                                                             "trec-run_file": run_file(text, "bad.trec")})
    html = response.content.decode()
    assert response.status_code == 400 and "Nothing imported" in html
    for expected in ('bad.trec line 2, field "docid": document \'31715\' is ranked twice for query \'1\' '
                     '(first on line 1)',
                     'bad.trec line 3, field "rank": \'x\' is not a whole number',
                     'bad.trec line 4, field "docid": unknown document \'nosuchdoc\'',
                     "bad.trec line 5: has 5 columns",
                     'bad.trec line 6, field "score": \'nan\' is not a finite number'):
        assert expected.replace("'", "&#x27;").replace('"', "&quot;") in html, expected
    assert not Ranking.objects.exists() and not RankingEntry.objects.exists()
    refused = logged_in(dave).post(PAGE + "rankings/import/", {"trec-name": "", "trec-run_file": run_file("")})
    assert refused.status_code == 400 and not Ranking.objects.exists()


def test_a_bm25_run_started_on_the_page_is_queued_then_written_by_the_worker_as_the_command_writes_it(
        dave, django_capture_on_commit_callbacks) -> None:
    load_minifact()
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = logged_in(dave).post(PAGE + "rankings/bm25/", {"bm25-name": "bm25-page", "bm25-k": 5})
    assert response.status_code == 302 and len(sent) == 1  # one message, after commit
    ranking = Ranking.objects.get(name="bm25-page")
    assert (ranking.method, ranking.status, ranking.entries.count()) == ("bm25", "queued", 0)
    panel = logged_in(dave).get(PAGE + "rankings/").content.decode()
    assert 'hx-trigger="every 2s"' in panel and 'data-status="queued"' in panel
    assert rank_bm25(ranking.pk) == "done"
    assert rank_bm25(ranking.pk) == "not claimed"  # a repeated message does nothing
    ranking.refresh_from_db()
    reference = bm25_ranking(Collection.objects.get(), "bm25-command", k=5)
    assert ranking.status == "done" and entries_of(ranking) == entries_of(reference)
    # k = 5, but BM25 retrieves only documents sharing a term with the query: at most 3 here, 12 in all
    assert ranking.depth == reference.depth == 3 and len(entries_of(ranking)) == 12
    panel = logged_in(dave).get(PAGE + "rankings/").content.decode()
    assert "hx-trigger" not in panel and 'data-status="done"' in panel
    taken = logged_in(dave).post(PAGE + "rankings/bm25/", {"bm25-name": "bm25-page", "bm25-k": 5})
    assert taken.status_code == 400 and "already has a ranking named" in taken.content.decode()
    assert logged_in(dave).post(PAGE + "rankings/bm25/", {"bm25-name": "b", "bm25-k": 0}).status_code == 400
    assert Ranking.objects.count() == 2


def test_a_model_run_started_on_the_page_is_split_in_chunks_the_workers_rank_and_merge(
        dave, django_capture_on_commit_callbacks) -> None:
    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    call_command("add_model", "lev", "--backend", "classical", "--metric", "levenshtein", stdout=StringIO())
    client = logged_in(dave)
    html = client.get(PAGE).content.decode()
    assert ">minilm (sentence-transformers)</option>" in html and "levenshtein" not in html
    model_pk = re.search(r'<option value="(\d+)"[^>]*>minilm', html).group(1)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        one = client.post(PAGE + "rankings/model/", {"model-model": model_pk, "model-name": "", "model-k": 3})
        split = client.post(PAGE + "rankings/model/", {"model-model": model_pk, "model-name": "minilm-split",
                                                   "model-k": 3, "model-docs_per_chunk": 4})
    assert one.status_code == split.status_code == 302
    whole, parts = Ranking.objects.get(name="minilm"), Ranking.objects.get(name="minilm-split")
    # one chunk per subset (da: 6 documents, en: 10); split by 4: da 0-4, 4-6; en 0-4, 4-8, 8-10
    assert sorted(whole.chunks.values_list("doc_start", "doc_end")) == [(0, 6), (0, 10)]
    assert sorted(parts.chunks.values_list("doc_start", "doc_end")) == [(0, 4), (0, 4), (4, 6), (4, 8), (8, 10)]
    assert len(sent) == 7 and whole.status == parts.status == "queued"
    assert "0 of 5 chunks" in client.get(PAGE + "rankings/").content.decode()
    assert work(whole.pk) == 2 and work(parts.pk) == 5
    whole.refresh_from_db()
    parts.refresh_from_db()
    assert whole.status == parts.status == "done" and entries_of(whole) == entries_of(parts)
    assert whole.depth == 3 and len(entries_of(whole)) == 3 * 7  # 7 queries, top 3 each
    assert "5 of 5 chunks" in client.get(PAGE + "rankings/").content.decode()
    lev = client.post(PAGE + "rankings/model/", {"model-model": "999999", "model-name": "x", "model-k": 3})
    assert lev.status_code == 400 and "Select a valid choice" in lev.content.decode()
    assert RankingChunk.objects.count() == 7 and Ranking.objects.count() == 2


def test_pooling_on_the_page_builds_the_judging_task_as_the_command_does(dave) -> None:
    load_minifact()
    load_run()
    load_run("second", path=RUN_FILE.parent / "minifact-run-2.trec")
    en = Subset.objects.get(name="en")
    rankings = {r.name: r.pk for r in Ranking.objects.all()}
    client = logged_in(dave)
    response = client.post(PAGE + "pool/", {"pool-subset": en.pk,
                                            "pool-rankings": [rankings["elsewhere"], rankings["second"]],
                                            "pool-depth": 3, "pool-step": 0.5})
    assert response.status_code == 302
    pool = Pool.objects.get()
    wanted = set(RankingEntry.objects.filter(query__subset=en, rank__lte=3).values_list("query_id", "document_id"))
    assert set(pool.units.values_list("query_id", "document_id")) == wanted
    assert (pool.depth, pool.task.kind, pool.task.scale_step, pool.task.language) == (3, "graded_relevance", 0.5,
                                                                                      "eng-Latn")
    assert sorted(pool.rankings.values_list("name", flat=True)) == ["elsewhere", "second"]
    again = client.post(PAGE + "pool/", {"pool-subset": en.pk, "pool-rankings": [rankings["elsewhere"]],
                                         "pool-depth": 3, "pool-step": 0.5})
    assert again.status_code == 302 and PoolUnit.objects.count() == len(wanted)  # nothing new
    assert f"{len(wanted)} in all" in client.get(PAGE).content.decode()


def test_pooling_refuses_a_run_not_finished_or_no_run_and_changes_nothing(dave) -> None:
    load_minifact()
    load_run()
    queued = Ranking.objects.create(collection=Collection.objects.get(), name="later", method="bm25", status="queued")
    en = Subset.objects.get(name="en")
    client = logged_in(dave)
    for data in ({"pool-subset": en.pk, "pool-rankings": [queued.pk], "pool-depth": 3, "pool-step": 0.1},
                 {"pool-subset": en.pk, "pool-rankings": [], "pool-depth": 3, "pool-step": 0.1},
                 {"pool-subset": en.pk, "pool-rankings": [Ranking.objects.get(name="elsewhere").pk], "pool-depth": 0,
                  "pool-step": 0.1}):
        response = client.post(PAGE + "pool/", data)
        assert response.status_code == 400 and 'class="errorlist' in response.content.decode()
    assert not Pool.objects.exists()


def test_the_judging_batch_goes_to_the_speakers_of_the_pool_language_with_an_optional_llm_judge(
        dave, alice, bob, django_capture_on_commit_callbacks, local_llm_endpoints) -> None:
    load_minifact()
    load_run()
    summary = build_pool(Subset.objects.get(name="en"), list(Ranking.objects.all()), depth=2)
    judge = make_judge("judge-x", "http://127.0.0.1:9/v1")
    client = logged_in(dave)
    assert "judge-x" in client.get(PAGE).content.decode()
    url, prefix = f"{PAGE}pools/{summary.pool_id}/batch/", f"batch-{summary.pool_id}"
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = client.post(url, {f"{prefix}-overlap": 1, f"{prefix}-judge": judge.annotator.pk})
    assert response.status_code == 302
    batch = Batch.objects.get()
    assert (batch.language, batch.overlap, batch.batch_items.count()) == ("eng-Latn", 1, summary.total)
    # alice lists English; bob only Arabic
    assert list(BatchAssignee.objects.filter(batch=batch).values_list("annotator__user__username", flat=True)) == [
        "alice"]
    llm_run = LLMRun.objects.get()
    assert (llm_run.annotator_id, llm_run.batch_id, llm_run.total_items, llm_run.status) == (
        judge.annotator.pk, batch.pk, summary.total, "queued")
    assert len(sent) == 1
    page = client.get(PAGE).content.decode()
    assert f"{batch.name}</a>: 1 annotator, overlap 1" in page and "LLM judge judge-x: queued" in page
    again = client.post(url, {f"{prefix}-overlap": ""})
    assert again.status_code == 302 and Batch.objects.count() == 1 and LLMRun.objects.count() == 1
    assert client.post(url, {f"{prefix}-overlap": 0}).status_code == 400
    other = client.post(f"{PAGE}pools/{summary.pool_id + 1}/batch/", {})
    assert other.status_code == 404


def test_a_run_still_queued_is_left_out_of_the_evaluation_until_it_is_done(dave) -> None:
    load_minifact()
    load_run()
    queued = start_bm25_ranking(Collection.objects.get(), "bm25", k=5)
    assert {row.ranking for row in evaluate_collection(Collection.objects.get(), ks=[10])} == {"elsewhere"}
    rank_bm25(queued.pk)
    assert {row.ranking for row in evaluate_collection(Collection.objects.get(), ks=[10])} == {"bm25", "elsewhere"}


def test_a_model_run_whose_model_fails_is_marked_failed_with_the_reason_on_the_page(
        dave, local_llm_endpoints, monkeypatch) -> None:
    load_minifact()
    monkeypatch.setenv("HUME_TEST_EMBED_API_KEY", "sk-test")
    call_command("add_model", "gone", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                 "--model-id", "gone", "--api-key-env", "HUME_TEST_EMBED_API_KEY", stdout=StringIO())
    client = logged_in(dave)
    html = client.get(PAGE).content.decode()
    model_pk = re.search(r'<option value="(\d+)"[^>]*>gone', html).group(1)
    # a remote endpoint is off for researchers until an admin turns its switch on: refused, nothing stored
    refused = client.post(PAGE + "rankings/model/", {"model-model": model_pk, "model-k": 3})
    assert refused.status_code == 400 and "only an admin may start gone" in refused.content.decode()
    assert not Ranking.objects.exists() and not RankingChunk.objects.exists()
    EmbeddingModel.objects.filter(pk=model_pk).update(researchers_may_run=True)
    assert client.post(PAGE + "rankings/model/", {"model-model": model_pk, "model-k": 3}).status_code == 302
    ranking = Ranking.objects.get(name="gone")
    with pytest.raises(Exception):  # noqa: B017  (the worker's task fails loudly; the run says why)
        work(ranking.pk)
    ranking.refresh_from_db()
    assert ranking.status == "failed" and "cannot reach the endpoint" in ranking.error and not ranking.entries.exists()
    panel = client.get(PAGE + "rankings/").content.decode()
    assert 'data-status="failed"' in panel and "cannot reach the endpoint" in panel and "hx-trigger" not in panel


def test_the_addresses_of_before_the_rename_to_ranking_redirect_keeping_the_method(dave) -> None:
    """The rankings were "runs" once (issue 21, item 5): a bookmark of /runs/ still reaches the panel, and a
    script posting to /runs/bm25/ still starts a BM25 ranking, through one 308 redirect that keeps the POST."""
    load_minifact()
    client = logged_in(dave)
    for old, new in (("runs/", "rankings/"), ("runs/import/", "rankings/import/"), ("runs/bm25/", "rankings/bm25/"),
                     ("runs/model/", "rankings/model/")):
        moved = client.get(PAGE + old + "?x=1")
        assert (moved.status_code, moved["Location"]) == (308, PAGE + new + "?x=1")
    assert 'id="rankings-panel"' in client.get(PAGE + "runs/", follow=True).content.decode()
    response = client.post(PAGE + "runs/bm25/", {"bm25-name": "old-address", "bm25-k": 5}, follow=True)
    assert [status for _url, status in response.redirect_chain] == [308, 302]
    assert Ranking.objects.get().name == "old-address" and Ranking.objects.get().method == "bm25"


def test_a_bm25_ranking_that_fails_stores_the_reason_frees_its_lease_and_is_not_taken_again(
        dave, monkeypatch) -> None:
    """The ranking is a job of the job layer: a failure is written through its lease, with the reason the page
    shows, and the row is no longer claimable (nothing half-written: the entries are written only at the end)."""
    from agreement.retrieval import actions

    load_minifact()
    ranking = start_bm25_ranking(Collection.objects.get(), "broken", k=5)

    def unreadable(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("the corpus could not be read")

    monkeypatch.setattr(actions, "bm25_entries", unreadable)  # the part taken away
    with pytest.raises(RuntimeError):
        rank_bm25(ranking.pk)
    ranking.refresh_from_db()
    assert (ranking.status, ranking.error, ranking.claim_token, ranking.lease_expires_at, ranking.attempts) == (
        "failed", "RuntimeError: the corpus could not be read", None, None, 1)
    assert not ranking.entries.exists() and ranking.k == 5
    assert rank_bm25(ranking.pk) == "not claimed"
    panel = logged_in(dave).get(PAGE + "rankings/").content.decode()
    assert 'data-status="failed"' in panel and "the corpus could not be read" in panel
