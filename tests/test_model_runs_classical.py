"""SAGE's classical metrics as models: each checked on a hand-computed example, then run on study items."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import v_measure_score

from measures.model_runs import classical
from tests import model_data as data


def test_levenshtein_ratio_of_kitten_and_sitting_is_8_of_13() -> None:
    # python-Levenshtein's ratio = 1 − indel distance / total length: LCS "ittn" → indel 6 + 7 − 2·4 = 5.
    assert classical.levenshtein(["kitten"], ["sitting"])[0] == pytest.approx(8 / 13)


def test_jaccard_counts_shared_word_tokens() -> None:
    # {the, cat, sat} and {the, cat, ran}: 2 shared of 4; case and punctuation do not make new tokens.
    assert classical.jaccard(["The cat sat."], ["the cat ran"])[0] == pytest.approx(0.5)
    assert classical.jaccard(["مرحبا بالعالم"], ["مرحبا"])[0] == pytest.approx(0.5)  # Arabic tokenises too


def test_rouge_l_is_the_f1_of_the_longest_common_subsequence() -> None:
    # LCS of "the cat sat on the mat" / "the cat lay on the mat" = "the cat on the mat": P = R = 5/6.
    assert classical.rouge(["the cat sat on the mat"], ["the cat lay on the mat"])[0] == pytest.approx(5 / 6)


def test_tfidf_cosine_uses_smoothed_idf() -> None:
    # sklearn: idf = ln((1 + n) / (1 + df)) + 1 with n = 2 texts; apple 1, banana = cherry = ln(3/2) + 1.
    w = math.log(3 / 2) + 1
    assert classical.tfidf(["apple banana"], ["apple cherry"])[0] == pytest.approx(1 / (1 + w * w))


def test_bm25_is_lucenes_formula_over_the_task_documents() -> None:
    # bm25s "lucene": idf = ln(1 + (N − df + 0.5)/(df + 0.5)), term = idf·tf/(tf + k1·(1 − b + b·dl/avgdl)),
    # k1 = 1.5, b = 0.75; documents [apple banana] (dl 2) and [cherry date date] (dl 3), avgdl 2.5, N = 2.
    scores = classical.bm25(["apple", "cherry date"], ["apple banana", "cherry date date"])
    idf = math.log(2)
    assert scores[0] == pytest.approx(idf / (1 + 1.5 * (0.25 + 0.75 * 2 / 2.5)))
    long_norm = 1.5 * (0.25 + 0.75 * 3 / 2.5)
    assert scores[1] == pytest.approx(idf / (1 + long_norm) + idf * 2 / (2 + long_norm))


@pytest.mark.parametrize("metric", sorted(classical.METRICS))
def test_every_metric_refuses_an_empty_text_naming_the_pair(metric: str) -> None:
    with pytest.raises(classical.EmptyText, match="pair 1: text b is empty"):
        classical.METRICS[metric](["one", "two"], ["one", "  "])


def _register(metric: str) -> None:
    call_command("add_model", metric, "--backend", "classical", "--metric", metric, stdout=io.StringIO())


def _run(task_name: str, model: str) -> dict:
    out = io.StringIO()
    call_command("run_models", task_name, "--models", model, "--wait", stdout=out)
    return json.loads(out.getvalue())["models"][model]


def _jaccard(x: str, y: str) -> float:
    a, b = set(classical.tokens(x)), set(classical.tokens(y))
    return len(a & b) / len(a | b)


@pytest.mark.django_db
def test_a_classical_metric_scores_sts_as_a_model_row() -> None:
    _register("jaccard")
    task = data.build_model_task("sts")
    scores = _run(task.name, "jaccard")
    sims = [_jaccard(a, b) for a, b, _ in data.STS]
    expected = stats.spearmanr([s for *_, s in data.STS], sims).statistic
    assert scores["gold"]["cosine_spearman"] == pytest.approx(expected)
    assert scores["texts_encoded"] == 0


@pytest.mark.django_db
def test_a_classical_metric_clusters_agglomeratively_on_its_distances() -> None:
    _register("jaccard")
    task = data.build_model_task("clustering")
    scores = _run(task.name, "jaccard")
    expected = []
    for item in data.CLUSTERING:
        texts = item["sentences"]
        dist = np.array([[1 - _jaccard(a, b) if i != j else 0.0 for j, b in enumerate(texts)]
                         for i, a in enumerate(texts)])
        k = len(set(item["labels"]))
        labels = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="complete").fit(dist).labels_
        expected.append(v_measure_score(item["labels"], labels))
    assert scores["gold"]["v_measure"] is None
    assert scores["gold"]["main_score"] == pytest.approx(np.mean(expected))


@pytest.mark.django_db
def test_an_unfinished_classical_run_reads_queued_not_embedding(dave) -> None:
    """Issue 28: a classical metric has nothing to embed; its run waiting for scoring showed "embedding"."""
    from django.template.loader import render_to_string

    from agreement.model_runs.execution import start_run
    from agreement.model_runs.models import EmbeddingModel
    from agreement.model_runs.rows import rows_context

    call_command("add_model", "lev", "--backend", "classical", "--metric", "levenshtein", stdout=io.StringIO())
    task = data.build_model_task("sts")
    start_run(task, EmbeddingModel.objects.get(name="lev"))
    html = render_to_string("model_runs/_model_rows.html", {**rows_context(task.pk, dave), "task": task})
    assert "</progress> queued</td>" in html and "embedding" not in html
