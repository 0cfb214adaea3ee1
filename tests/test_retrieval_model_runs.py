"""A registered model ranks a collection: the shipped all-MiniLM-L6-v2 through the registry's embedding cache."""
from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.model_runs.models import EmbeddingSlice
from agreement.retrieval.models import Ranking, RankingEntry
from tests.retrieval_helpers import load_minifact

pytestmark = pytest.mark.django_db


def test_minilm_ranks_each_query_by_cosine_of_its_own_sentence_transformers_vectors() -> None:
    from sentence_transformers import SentenceTransformer

    from agreement.model_runs.shipped import minilm_folder

    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    call_command("embedding_run", "MiniFact", "--model", "minilm", "--k", "3", stdout=StringIO())
    ranking = Ranking.objects.get(name="minilm")
    assert ranking.method == "embedding" and ranking.depth == 3

    entries = list(RankingEntry.objects.filter(ranking=ranking, query__query_id="3").order_by("rank")
                   .values_list("query__instruction", "query__text", "document__doc_id", "document__title",
                                "document__text", "score"))
    assert len(entries) == 3
    bare = SentenceTransformer(str(minilm_folder()), device="cpu", local_files_only=True)
    instruction, text = entries[0][0], entries[0][1]  # MTEB: query + " " + instruction (the instruction after)
    query = bare.encode([f"{text} {instruction}" if instruction else text], normalize_embeddings=True)[0]
    for _, _, _, title, text, score in entries:
        document_text = f"{title} {text}".strip()
        expected = float(bare.encode([document_text], normalize_embeddings=True)[0] @ query)
        assert score == pytest.approx(expected, abs=1e-4)
    assert [e[5] for e in entries] == sorted((e[5] for e in entries), reverse=True)

    cached = EmbeddingSlice.objects.count()
    call_command("embedding_run", "MiniFact", "--model", "minilm", "--name", "again", "--k", "3", stdout=StringIO())
    assert EmbeddingSlice.objects.count() == cached  # the second run encoded nothing
    assert np.allclose(sorted(RankingEntry.objects.filter(ranking__name="again").values_list("score", flat=True)),
                       sorted(RankingEntry.objects.filter(ranking=ranking).values_list("score", flat=True)))


def test_a_classical_metric_or_an_unknown_model_is_refused_with_nothing_stored() -> None:
    load_minifact()
    call_command("add_model", "lev", "--backend", "classical", "--metric", "levenshtein", stdout=StringIO())
    with pytest.raises(CommandError, match="lev is a classical metric"):
        call_command("embedding_run", "MiniFact", "--model", "lev", stdout=StringIO())
    with pytest.raises(CommandError, match="no model named 'nope'"):
        call_command("embedding_run", "MiniFact", "--model", "nope", stdout=StringIO())
    assert not Ranking.objects.filter(method="embedding").exists()
