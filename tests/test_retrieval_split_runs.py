"""An embedding run split across real Celery workers equals the one-process run: same documents, same
ranks, same cosines; a repeated message changes nothing."""
from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import call_command

from agreement.model_runs.embedding import embed
from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Collection, Document, Ranking, RankingChunk, RankingEntry
from agreement.retrieval.split_rankings import work
from agreement.retrieval.system_rankings import embedding_ranking
from tests.retrieval_helpers import load_minifact

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def entries_of(ranking: Ranking) -> list[tuple[int, int, int, float]]:
    return list(RankingEntry.objects.filter(ranking=ranking).order_by("query_id", "rank")
                .values_list("query_id", "rank", "document_id", "score"))


def test_a_split_embedding_run_on_two_workers_equals_the_single_process_run(start_worker) -> None:
    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    model, collection = EmbeddingModel.objects.get(), Collection.objects.get()
    single = embedding_ranking(collection, "single", lambda texts: embed(model, texts), k=3)

    start_worker(concurrency=2)
    out = StringIO()
    call_command("embedding_run", "MiniFact", "--model", "minilm", "--name", "split", "--k", "3", "--split", "2",
                 stdout=out)
    split = Ranking.objects.get(name="split")
    chunks = RankingChunk.objects.filter(ranking=split).count()
    assert f"{chunks} chunks queued for the workers" in out.getvalue()
    assert chunks >= 4 and chunks == sum(-(-Document.objects.filter(subset=s).count() // 2)
                                         for s in collection.subsets.all())
    deadline = time.monotonic() + 120
    while not Ranking.objects.get(pk=split.pk).depth and time.monotonic() < deadline:
        time.sleep(0.2)

    split.refresh_from_db()
    assert split.depth == single.depth == 3
    assert not RankingChunk.objects.filter(ranking=split).exclude(status="done").exists()
    expected, got = entries_of(single), entries_of(split)
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    assert [row[3] for row in got] == pytest.approx([row[3] for row in expected], abs=1e-6)

    assert work(split.pk) == 0  # a repeated message: no chunk left, the merge already written
    assert entries_of(split) == got
