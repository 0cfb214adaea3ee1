"""The shipped all-MiniLM-L6-v2, run through sentence-transformers on a task of every kind; each score is
checked against a value this test computes itself with scikit-learn / SciPy from the same model's embeddings
(encoded here with bare SentenceTransformer.encode), the way MTEB 2.20.0's evaluators compute them."""
from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats
from sklearn.cluster import AgglomerativeClustering, MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, ndcg_score, v_measure_score
from sklearn.metrics.pairwise import cosine_distances, cosine_similarity
from sklearn.model_selection import KFold, cross_val_predict

from agreement.model_runs.models import EmbeddingModel, Prediction
from tests import model_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def encoder() -> Any:
    from sentence_transformers import SentenceTransformer

    from agreement.model_runs.shipped import minilm_folder

    model = SentenceTransformer(str(minilm_folder()), device="cpu", local_files_only=True)
    return lambda texts: model.encode(list(texts), batch_size=32, convert_to_numpy=True)


def run(kind: str, *options: str) -> tuple[dict[str, Any], Any]:
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task = data.build_model_task(kind)
    out = io.StringIO()
    call_command("run_models", task.name, "--models", "minilm", "--wait", *options, stdout=out)
    return json.loads(out.getvalue())["models"]["minilm"], task


def cos_pairs(encoder: Any, a: list[str], b: list[str]) -> np.ndarray:
    return cosine_similarity(encoder(a), encoder(b)).diagonal()


def mean_ratings(humans: dict[str, list[Any]]) -> list[Any]:
    return [np.mean(v) for v in zip(*humans.values(), strict=True)]


def test_sts_scores_are_spearman_and_pearson_of_cosine(encoder: Any) -> None:
    scores, _ = run("sts")
    sims = cos_pairs(encoder, [a for a, _, _ in data.STS], [b for _, b, _ in data.STS])
    gold = [s for _, _, s in data.STS]
    assert scores["gold"]["cosine_spearman"] == pytest.approx(stats.spearmanr(gold, sims).statistic, abs=1e-9)
    assert scores["gold"]["cosine_pearson"] == pytest.approx(stats.pearsonr(gold, sims).statistic, abs=1e-5)
    assert scores["gold"]["main_score"] == scores["gold"]["cosine_spearman"]
    humans = mean_ratings(data.STS_HUMANS)
    assert scores["humans"]["cosine_spearman"] == pytest.approx(stats.spearmanr(humans, sims).statistic, abs=1e-9)
    assert scores["texts_encoded"] == 14


def _mrr_at_10(rel: np.ndarray, sims: np.ndarray) -> float:
    ranked = rel[np.argsort(-sims)][:10]
    return 1.0 / (np.flatnonzero(ranked)[0] + 1) if ranked.any() else 0.0


def test_reranking_scores_are_map_mrr_and_ndcg_of_cosine_rankings(encoder: Any) -> None:
    scores, task = run("reranking")
    expected: dict[str, list[float]] = {"map_at_1000": [], "mrr_at_10": [], "ndcg_at_10": []}
    for query in data.RERANKING:
        sims = cos_pairs(encoder, [query["query"]] * 4, [c["text"] for c in query["candidates"]])
        rel = np.array([c["relevant"] for c in query["candidates"]])
        expected["map_at_1000"].append(average_precision_score(rel, sims))
        expected["mrr_at_10"].append(_mrr_at_10(rel, sims))
        expected["ndcg_at_10"].append(ndcg_score([rel], [sims], k=10))
    for name, values in expected.items():
        assert scores["gold"][name] == pytest.approx(np.mean(values), abs=1e-6), name
    top = Prediction.objects.get(run__task=task, item__external_id="2").value["gold"][0]
    assert top == "c2"  # the flu query ranks the influenza sentence first


def test_graded_relevance_score_is_ndcg_at_10_with_linear_gains(encoder: Any) -> None:
    scores, _ = run("graded_relevance")
    gold, humans = [], []
    for n, query in enumerate(data.GRADED):
        sims = cos_pairs(encoder, [query["query"]] * 4, [d["text"] for d in query["documents"]])
        gold.append(ndcg_score([[d["score"] for d in query["documents"]]], [sims], k=10))
        mean = [np.mean([h[n][d["id"]] for h in data.GRADED_HUMANS.values()]) for d in query["documents"]]
        humans.append(ndcg_score([mean], [sims], k=10))
    assert scores["gold"]["ndcg_at_10"] == pytest.approx(np.mean(gold), abs=1e-6)
    assert scores["humans"]["ndcg_at_10"] == pytest.approx(np.mean(humans), abs=1e-6)


def test_clustering_scores_are_mteb_kmeans_and_sage_agglomerative_v_measure(encoder: Any) -> None:
    scores, _ = run("clustering")
    kmeans, agglo, humans = [], [], []
    for n, item in enumerate(data.CLUSTERING):
        vectors = encoder(item["sentences"]).astype(np.float64)
        k = len(set(item["labels"]))
        labels = MiniBatchKMeans(n_clusters=k, batch_size=500, n_init="auto", random_state=42).fit(vectors).labels_
        kmeans.append(v_measure_score(item["labels"], labels))
        tree = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="complete")
        agglo.append(v_measure_score(item["labels"], tree.fit(cosine_distances(vectors)).labels_))
        per_human = []
        for partition in (h[n] for h in data.CLUSTERING_HUMANS.values()):
            km = MiniBatchKMeans(n_clusters=len(set(partition)), batch_size=500, n_init="auto", random_state=42)
            per_human.append(v_measure_score(partition, km.fit(vectors).labels_))
        humans.append(np.mean(per_human))
    assert scores["gold"]["v_measure"] == pytest.approx(np.mean(kmeans), abs=1e-9)
    assert scores["gold"]["v_measure_agglomerative"] == pytest.approx(np.mean(agglo), abs=1e-9)
    assert scores["humans"]["v_measure"] == pytest.approx(np.mean(humans), abs=1e-9)
    assert scores["gold"]["main_score"] == scores["gold"]["v_measure"]


def test_classification_is_mteb_cross_validation_with_the_mean_of_the_folds(encoder: Any) -> None:
    """MTEB's protocol (the default): per fold of KFold(5, shuffled, seed 42) a logistic regression on the
    training fold (7 items per label here, under MTEB's 8: undersampling keeps them all), its figures on the
    held-out fold, and the mean over the folds. tests/test_mteb_parity.py checks it against MTEB itself."""
    scores, task = run("classification")
    vectors = encoder([r["text"] for r in data.CLASSIFICATION])
    gold = np.array([r["label"] for r in data.CLASSIFICATION])
    accuracy, f1, predicted = [], [], np.empty(len(gold), dtype=object)
    for train, test in KFold(n_splits=5, shuffle=True, random_state=42).split(vectors):
        predicted[test] = LogisticRegression(max_iter=100).fit(vectors[train], gold[train]).predict(vectors[test])
        accuracy.append(accuracy_score(gold[test], predicted[test]))
        f1.append(f1_score(gold[test], predicted[test], average="macro"))
    assert scores["gold"]["accuracy"] == pytest.approx(np.mean(accuracy), abs=1e-9)
    assert scores["gold"]["f1"] == pytest.approx(np.mean(f1), abs=1e-9)
    assert (scores["protocol"], scores["gold"]["protocol"]) == ("mteb", "mteb")
    assert (scores["gold"]["cv_folds"], scores["gold"]["seed"], scores["gold"]["samples_per_label"]) == (5, 42, 8)
    stored = dict(Prediction.objects.filter(run__task=task).values_list("item__external_id", "value"))
    assert [stored[str(n)]["gold"] for n in range(1, 15)] == list(predicted)


def test_classification_pooled_protocol_is_a_named_option(encoder: Any) -> None:
    """--protocol pooled: whole training folds, one score over the pooled out-of-fold predictions."""
    scores, _ = run("classification", "--protocol", "pooled")
    vectors = encoder([r["text"] for r in data.CLASSIFICATION])
    gold = np.array([r["label"] for r in data.CLASSIFICATION])
    cv = KFold(n_splits=5, shuffle=True, random_state=42)
    predicted = cross_val_predict(LogisticRegression(max_iter=100), vectors, gold, cv=cv)
    assert scores["gold"]["accuracy"] == pytest.approx(accuracy_score(gold, predicted), abs=1e-9)
    assert scores["gold"]["f1"] == pytest.approx(f1_score(gold, predicted, average="macro"), abs=1e-9)
    assert (scores["protocol"], scores["gold"]["averaging"]) == ("pooled", "pooled out-of-fold predictions")
    assert "samples_per_label" not in scores["gold"]


def test_pairwise_predicts_the_candidate_closer_to_the_context(encoder: Any) -> None:
    scores, _ = run("pairwise")
    contexts = [p["context"] for p in data.PAIRWISE]
    sim_a = cos_pairs(encoder, contexts, [p["a"] for p in data.PAIRWISE])
    sim_b = cos_pairs(encoder, contexts, [p["b"] for p in data.PAIRWISE])
    predicted = np.where(sim_a > sim_b, "a", "b")
    gold = [p["preferred"] for p in data.PAIRWISE]
    assert scores["gold"]["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
    assert scores["gold"]["f1"] == pytest.approx(f1_score(gold, predicted, average="macro", zero_division=0))
    majority = ["a", "b", "a", "a", "b"]  # alice and bob disagree on item 3: the tie goes to "a"
    assert scores["humans"]["accuracy"] == pytest.approx(accuracy_score(majority, predicted))


def test_likert_maps_pearson_per_axis_to_sage_scores(encoder: Any) -> None:
    scores, _ = run("likert")
    sims = cos_pairs(encoder, [r["context"] for r in data.LIKERT], [r["text"] for r in data.LIKERT])
    sage = []
    for axis in ("overall", "coherence"):
        r = stats.pearsonr([rec["scores"][axis] for rec in data.LIKERT], sims).statistic
        assert scores["gold"]["axes"][axis]["pearson"] == pytest.approx(r, abs=1e-5)
        assert scores["gold"]["axes"][axis]["sage"] == pytest.approx(0.5 * (r + 1), abs=1e-5)
        sage.append(0.5 * (r + 1))
    assert scores["gold"]["main_score"] == pytest.approx(np.mean(sage), abs=1e-5)


def test_a_second_run_on_the_same_texts_encodes_nothing() -> None:
    first, task = run("sts")
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task.name = "models-sts-copy"
    copy = data.build_model_task("sts", "models-sts-copy")
    out = io.StringIO()
    call_command("run_models", copy.name, "--models", "minilm", "--wait", stdout=out)
    second = json.loads(out.getvalue())["models"]["minilm"]
    assert first["texts_encoded"] == 14 and second["texts_encoded"] == 0
    assert second["gold"] == first["gold"]
    assert EmbeddingModel.objects.get(name="minilm").dimensions == 384
