"""Runs made in the app: BM25 through bm25s, and exact cosine top-K through any embed(texts) callable."""
from __future__ import annotations

import hashlib
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from agreement.retrieval.evaluation_inputs import evaluate_collection
from agreement.retrieval.models import Collection, Ranking, RankingEntry
from agreement.retrieval.system_rankings import embedding_ranking
from tests.retrieval_helpers import load_minifact

pytestmark = pytest.mark.django_db


def hashed_bag_of_words(texts: list[str]) -> np.ndarray:
    """A real (if simple) embedding: word counts hashed into 64 dimensions."""
    out = np.zeros((len(texts), 64))
    for row, text in enumerate(texts):
        for word in re.findall(r"\w\w+", text.lower()):
            out[row, hashlib.md5(word.encode()).digest()[0] % 64] += 1
    return out


def ranked(ranking: Ranking, query_id: str) -> list[str]:
    return list(RankingEntry.objects.filter(ranking=ranking, query__query_id=query_id).order_by("rank")
                .values_list("document__doc_id", flat=True))


def test_bm25_ranks_each_subset_on_its_own_corpus() -> None:
    load_minifact()
    out = StringIO()
    call_command("bm25_run", "MiniFact", "--name", "bm25", "--k", "5", stdout=out)
    ranking = Ranking.objects.get(name="bm25")
    assert ranking.method == "bm25" and ranking.depth <= 5
    assert ranked(ranking, "3")[0] == "21257"  # vitamin D and respiratory infections
    # "reduce" is rarer in this corpus than "vitamin": the statin abstract outranks the second vitamin D one
    assert ranked(ranking, "3")[1:3] == ["32587", "22038"]
    assert ranked(ranking, "5")[0] == "31715"  # aspirin
    assert ranked(ranking, "q102")[0] == "d4"  # Danish: aspirin og tyktarmskræft
    assert not RankingEntry.objects.filter(ranking=ranking, score__lte=0).exists()
    binary = {r.subset: r for r in evaluate_collection(Collection.objects.get(), ks=[1, 10])
              if r.reference == "qrels:test"}
    assert binary["en"].scores.at("recall", 10) == 1.0


def test_an_embedding_run_keeps_each_querys_k_nearest_documents_by_cosine() -> None:
    load_minifact()
    ranking = embedding_ranking(Collection.objects.get(), "hashed-bow", hashed_bag_of_words, k=4, batch=3)
    assert ranking.method == "embedding" and ranking.depth == 4
    assert RankingEntry.objects.filter(ranking=ranking).count() == 4 * 7
    top = (RankingEntry.objects.filter(ranking=ranking, query__query_id="7", rank=1)
           .values_list("document__doc_id", "score").get())
    query = hashed_bag_of_words(["Sleep loss impairs memory."])[0]
    doc = hashed_bag_of_words(["Sleep deprivation impairs memory consolidation Loss of sleep after learning impairs "
                               "the consolidation of declarative memories in healthy volunteers."])[0]
    assert top[0] == "30195"
    assert top[1] == pytest.approx(query @ doc / np.linalg.norm(query) / np.linalg.norm(doc), abs=1e-6)


def test_a_second_run_of_the_same_name_is_refused() -> None:
    load_minifact()
    embedding_ranking(Collection.objects.get(), "x", hashed_bag_of_words, k=2)
    with pytest.raises(ValueError, match="already has a ranking named 'x'"):
        embedding_ranking(Collection.objects.get(), "x", hashed_bag_of_words, k=2)


def word_overlap(query: str, documents: list[str]) -> list[float]:
    """A real (if simple) reranker: the share of the query's words found in the document."""
    words = set(re.findall(r"\w\w+", query.lower()))
    return [len(words & set(re.findall(r"\w\w+", d.lower()))) / max(len(words), 1) for d in documents]


def test_a_reranked_run_reorders_the_base_top_k_and_never_adds_a_document() -> None:
    from agreement.retrieval.system_rankings import reranked_ranking
    from tests.retrieval_helpers import load_run

    load_minifact()
    load_run()
    base = Ranking.objects.get(name="elsewhere")
    ranking = reranked_ranking(base, "elsewhere+overlap", word_overlap, depth=4)
    assert (ranking.method, ranking.base_ranking, ranking.depth) == ("reranked", base, 4)
    for query_id in ("1", "3", "q101"):
        base_top = set(ranked(base, query_id)[:4])
        assert set(ranked(ranking, query_id)) == base_top
    scores = list(RankingEntry.objects.filter(ranking=ranking, query__query_id="7").order_by("rank")
                  .values_list("score", flat=True))
    assert scores == sorted(scores, reverse=True)
    rows = {(r.ranking, r.subset): r for r in evaluate_collection(Collection.objects.get(), ks=[4])
            if r.reference == "qrels:test"}
    assert rows["elsewhere+overlap", "en"].scores.at("recall", 4) == rows["elsewhere", "en"].scores.at("recall", 4)
