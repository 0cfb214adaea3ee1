"""nDCG@k, Recall@k and MAP over matrices, checked against pytrec_eval (trec_eval, as MTEB uses it) and a
published worked example."""
from __future__ import annotations

import random

import numpy as np
import pytest
import pytrec_eval

from measures.trec_scoring import Judgments, Prepared, evaluate_dicts, order_like_trec_eval

KS = list(range(1, 101))


def pytrec(run: dict, qrels: dict, level: int = 1) -> dict[str, float]:
    """Mean over queries of pytrec_eval's ndcg_cut, recall and map, as MTEB's RetrievalEvaluator averages them."""
    measures = {"ndcg_cut." + ",".join(map(str, KS)), "recall." + ",".join(map(str, KS)), "map"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    names = [f"ndcg_cut_{k}" for k in KS] + [f"recall_{k}" for k in KS] + ["map"]
    return {name: float(np.mean([scores[name] for scores in per_query.values()])) for name in names}


def random_case(seed: int, grades: list[int]) -> tuple[dict, dict]:
    rng = random.Random(seed)
    docs = [f"doc{i}" for i in range(400)]
    qrels = {f"q{q}": {d: rng.choice(grades) for d in rng.sample(docs, rng.randint(1, 30))} for q in range(60)}
    run = {f"q{q}": {d: round(rng.random(), 1) for d in rng.sample(docs, rng.randint(5, 150))} for q in range(60)}
    run["not-judged"] = {"doc1": 1.0}  # trec_eval skips a query without judgments
    qrels["q0"] = {"doc1": 0, "doc2": 0}  # all judged irrelevant: nDCG 0, recall 0, AP 0
    return run, qrels


def assert_same_as_pytrec(run: dict, qrels: dict, level: int, threshold: float, scale: float = 1.0) -> None:
    reference = pytrec(run, qrels, level)
    graded = {q: {d: g / scale for d, g in judged.items()} for q, judged in qrels.items()}
    mine = evaluate_dicts(run, graded, threshold=threshold)
    for k in KS:
        assert mine.at("ndcg", k) == pytest.approx(reference[f"ndcg_cut_{k}"], abs=1e-12), f"nDCG@{k}"
        assert mine.at("recall", k) == pytest.approx(reference[f"recall_{k}"], abs=1e-12), f"Recall@{k}"
    assert mine.map == pytest.approx(reference["map"], abs=1e-12)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_cut_off_matches_pytrec_eval_on_graded_integer_qrels(level: int) -> None:
    run, qrels = random_case(level, [0, 0, 1, 2, 3])
    assert_same_as_pytrec(run, qrels, level, threshold=level)


def test_float_judgments_match_pytrec_eval_on_the_same_judgments_times_ten() -> None:
    """nDCG is scale-free and recall only compares with the threshold, so 0–10 floats with one decimal
    (an LLM judge's scores) score exactly like pytrec_eval's integers ×10 with relevance_level ×10."""
    run, qrels = random_case(11, list(range(0, 101)))
    assert_same_as_pytrec(run, qrels, level=65, threshold=6.5, scale=10.0)


def test_ties_are_broken_like_trec_eval_by_document_id_descending() -> None:
    assert order_like_trec_eval({"a": 1.0, "b": 2.0, "c": 1.0, "B": 1.0}) == ["b", "c", "a", "B"]
    run = {"q": {"d1": 0.5, "d2": 0.5, "d3": 0.5}}
    qrels = {"q": {"d1": 1}}
    assert evaluate_dicts(run, qrels).at("ndcg", 1) == pytrec(run, qrels)["ndcg_cut_1"] == 0.0
    assert evaluate_dicts(run, qrels).at("ndcg", 3) == pytest.approx(pytrec(run, qrels)["ndcg_cut_3"])


def test_wikipedia_worked_example_of_ndcg() -> None:
    """Wikipedia, "Discounted cumulative gain", section Example: D1..D6 retrieved with relevances 3, 2, 3, 0,
    1, 2, and D7 (3), D8 (2) relevant but not retrieved: DCG6 = 6.861, IDCG6 = 8.740 (ideal 3, 3, 3, 2, 2, 2),
    nDCG6 = 0.785."""
    relevance = {"D1": 3, "D2": 2, "D3": 3, "D4": 0, "D5": 1, "D6": 2, "D7": 3, "D8": 2}
    run = {"q": {f"D{i}": 10.0 - i for i in range(1, 7)}}
    scores = evaluate_dicts(run, {"q": relevance}, ks=[6])
    assert scores.at("ndcg", 6) == pytest.approx(6.861 / 8.740, abs=5e-4)
    assert round(scores.at("ndcg", 6), 3) == 0.785
    # Recall@6 at threshold 1: D1, D2, D3, D5, D6 of the seven relevant documents (all but D4).
    assert evaluate_dicts(run, {"q": relevance}, ks=[6]).at("recall", 6) == pytest.approx(5 / 7)


def test_queries_without_relevant_documents_are_counted() -> None:
    scores = evaluate_dicts({"a": {"x": 1.0}, "b": {"y": 1.0}}, {"a": {"x": 0}, "b": {"y": 2}}, ks=[1])
    assert (scores.queries, scores.queries_without_relevant) == (2, 1)
    assert scores.at("ndcg", 1) == 0.5 and scores.map == 0.5


def test_a_pair_judged_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="judged twice"):
        Prepared(Judgments.of([1, 1], [7, 7], [1.0, 2.0]), threshold=1, k_max=10)
