"""Ranking metrics: trec_eval-style MAP / MRR / nDCG on a hand-made qrels + run (expected values
worked out by hand below), HUME's MAP over 0/1 judgments, and the tie-aware per-query metrics."""

import math

import numpy as np
import pytest

from measures import metrics as m

# A small TREC-style qrels and run, written out by hand.
QRELS = {
    "q1": {"d1": 1, "d2": 0, "d3": 1, "d6": 1},  # 3 relevant, d6 never retrieved
    "q2": {"d2": 2, "d4": 1, "d5": 0},  # graded
    "q3": {"d1": 0, "d2": 0},  # no relevant doc: trec_eval-style exclusion
}
RUN = {
    "q1": ["d1", "d2", "d3", "d4", "d5"],
    "q2": ["d1", "d2", "d3", "d4"],
    "q3": ["d1", "d2"],
}


def test_ranked_average_precision_by_hand() -> None:
    # q1: relevant at ranks 1 and 3 → P@1 = 1, P@3 = 2/3; R = 3 → AP = (1 + 2/3)/3 = 0.555…
    # q2: relevant at ranks 2 and 4 → P@2 = 1/2, P@4 = 2/4; R = 2 → AP = (0.5 + 0.5)/2 = 0.5
    assert m.ranked_average_precision(RUN["q1"], QRELS["q1"]) == pytest.approx(5 / 9, abs=1e-12)
    assert m.ranked_average_precision(RUN["q2"], QRELS["q2"]) == pytest.approx(0.5, abs=1e-12)
    # MAP over q1, q2 = (5/9 + 1/2)/2 = 0.527…; q3 has no relevant doc and is excluded (count 1).
    value, excluded = m.ranked_mean(m.ranked_average_precision, RUN, QRELS)
    assert value == pytest.approx((5 / 9 + 0.5) / 2, abs=1e-12)
    assert excluded == 1


def test_ranked_ndcg_at_10_by_hand_with_trec_eval_linear_gains() -> None:
    # q1: DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG (3 relevant) = 1 + 1/log2(3) + 1/log2(4) = 2.130930
    #     → 1.5/2.130930 = 0.703918
    # q2: DCG = 2/log2(3) + 1/log2(5) = 1.261860 + 0.430677 = 1.692537; IDCG = 2/1 + 1/log2(3) = 2.630930
    #     → 0.643322
    assert m.ranked_ndcg_at_k(RUN["q1"], QRELS["q1"]) == pytest.approx(0.703918, abs=1e-6)
    assert m.ranked_ndcg_at_k(RUN["q2"], QRELS["q2"]) == pytest.approx(0.643322, abs=1e-6)
    value, excluded = m.ranked_mean(m.ranked_ndcg_at_k, RUN, QRELS)
    assert value == pytest.approx((0.703918 + 0.643322) / 2, abs=1e-6)
    assert excluded == 1


def test_ranked_ndcg_with_exponential_gains_by_hand() -> None:
    # q2 with gains 2^rel − 1 = 3 and 1: DCG = 3/log2(3) + 1/log2(5) = 1.892789 + 0.430677 = 2.323466;
    # IDCG = 3/1 + 1/log2(3) = 3.630930 → 2.323466/3.630930 = 0.639909
    assert m.ranked_ndcg_at_k(RUN["q2"], QRELS["q2"], gains="exponential") == pytest.approx(0.639909, abs=1e-6)


def test_ranked_reciprocal_rank_by_hand_and_cut_at_k() -> None:
    # q1: first relevant at rank 1 → 1; q2: at rank 2 → 0.5; MRR = 0.75
    value, excluded = m.ranked_mean(m.ranked_reciprocal_rank, RUN, QRELS)
    assert value == pytest.approx(0.75)
    assert excluded == 1
    assert m.ranked_reciprocal_rank(RUN["q2"], QRELS["q2"], k=1) == 0.0


def test_score_based_ndcg_equals_rank_based_ndcg_without_ties() -> None:
    # Same q2 through sklearn's ndcg_score: scores strictly decreasing in run order.
    docs = ["d1", "d2", "d3", "d4", "d5"]
    gold = [QRELS["q2"].get(d, 0) for d in docs]
    scores = [5, 4, 3, 2, 1]
    assert m.ndcg_at_k(gold, scores, gains="linear") == pytest.approx(m.ranked_ndcg_at_k(docs, QRELS["q2"]))
    assert m.ndcg_at_k(gold, scores) == pytest.approx(0.639909, abs=1e-6)  # exponential by default


def test_average_precision_of_binary_judgments_by_hand() -> None:
    # HUME MAP: sklearn average precision with the annotator's 0/1 judgments as scores.
    # gold 1,0,1,0,0,0,0; judged relevant: candidates 1 and 2.
    # threshold 1: TP 1 of 2 judged → P = 1/2, R = 1/2; threshold 0: all 7 → P = 2/7, R = 1.
    # AP = Σ ΔR·P = 0.5·0.5 + 0.5·2/7 = 0.392857
    assert m.average_precision([1, 0, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0]) == pytest.approx(0.392857, abs=1e-6)
    # judging nothing relevant leaves one tied group: AP = base rate 2/7
    assert m.average_precision([1, 0, 1, 0, 0, 0, 0], [0] * 7) == pytest.approx(2 / 7)


def test_reciprocal_rank_is_tie_aware() -> None:
    # All four candidates tied, 2 relevant: P(first relevant at slot s) = C(4−s, 1)/C(4, 2):
    # s=1: 3/6, s=2: 2/6, s=3: 1/6 → E[1/s] = 0.5 + 1/6 + 1/18 = 0.722…
    assert m.reciprocal_rank([0, 1, 0, 1], [0, 0, 0, 0]) == pytest.approx(0.5 + 1 / 6 + 1 / 18)
    # Judged candidates first: one judged, relevant → 1
    assert m.reciprocal_rank([0, 1, 0, 1], [0, 1, 0, 0]) == pytest.approx(1.0)
    # Judged one wrong candidate, then 3 tied with 2 relevant: 1/(1+s) with s=1: 2/3, s=2: 1/3
    assert m.reciprocal_rank([0, 1, 0, 1], [1, 0, 0, 0]) == pytest.approx(2 / 3 * 1 / 2 + 1 / 3 * 1 / 3)
    # Cut at k = 1 with a wrong first candidate → 0
    assert m.reciprocal_rank([0, 1, 0, 1], [1, 0, 0, 0], k=1) == 0.0


def test_recall_at_k_is_tie_aware_at_the_cut() -> None:
    # gold ≥ 5 is relevant: docs 0 and 2. Scores: doc0 9 (alone), docs 1,2,3 tied at 4.
    # k = 2: doc0 counts 1; one of the 3 tied slots fits above the cut → doc2 counts 1/3.
    assert m.recall_at_k([8, 0, 6, 1], [9, 4, 4, 4], k=2, threshold=5) == pytest.approx((1 + 1 / 3) / 2)
    assert m.recall_at_k([8, 0, 6, 1], [9, 4, 4, 4], k=4, threshold=5) == pytest.approx(1.0)


def test_query_without_relevant_gold_scores_zero_as_pytrec_eval_counts_it() -> None:
    queries = [([1, 0, 0], [1, 0, 0]), ([0, 0, 0], [1, 1, 0]), ([0, 1], [0, 1])]
    value, excluded = m.mean_over_queries(m.average_precision, queries)
    assert (value, excluded) == (pytest.approx(2 / 3), 0)  # APs 1, 0, 1: the middle query averaged in as 0
    for metric in (m.average_precision, m.reciprocal_rank, m.ndcg_at_k, m.recall_at_k):
        assert metric([0, 0, 0], [1, 0, 0]) == 0.0


def test_graded_ndcg_uses_exponential_gains() -> None:
    # gold 3, 1, 0 ranked 1, 3, 2: gains 7, 1, 0. DCG = 7/1 + 0/log2(3) + 1/log2(4) = 7.5;
    # IDCG = 7 + 1/log2(3) = 7.630930 → 0.982842
    assert m.ndcg_at_k([3, 1, 0], [9, 1, 5]) == pytest.approx(7.5 / (7 + 1 / math.log2(3)), abs=1e-9)
    assert m.ndcg_at_k.explain([3], [1])[0] is None  # a single document cannot be ranked


def test_human_and_model_ranking_scores_agree_on_strict_rankings_and_no_positive_queries() -> None:
    """The humans' tie-aware per-query scores (measures/ranking.py) and the models' and runs' scorer
    (measures/trec_scoring.py, pytrec_eval's and MTEB's numbers) are two codes for one metric family: on
    rankings without ties they must give the same AP, MRR@10, nDCG@10 and Recall@10, a query with no relevant
    candidate (0 for both) included. 200 random queries, seeded."""
    from measures.trec_scoring import evaluate_dicts

    rng = np.random.default_rng(7)
    run, qrels, mine = {}, {}, {"ap": [], "rr": [], "ndcg": [], "recall": []}
    for q in range(200):
        n = int(rng.integers(2, 15))
        gold = rng.integers(0, 4, n) * (rng.random(n) < 0.4) if q % 10 else np.zeros(n, dtype=int)
        scores = rng.permutation(n).astype(float)  # strict: no ties
        docs = [f"d{i}" for i in range(n)]
        run[f"q{q}"], qrels[f"q{q}"] = dict(zip(docs, scores, strict=True)), dict(zip(docs, gold.tolist(), strict=True))
        mine["ap"].append(m.average_precision(gold, scores))
        mine["rr"].append(m.reciprocal_rank(gold, scores, k=10))
        mine["ndcg"].append(m.ndcg_at_k(gold, scores, k=10, gains="linear"))
        mine["recall"].append(m.recall_at_k(gold, scores, k=10, threshold=1))
    theirs = evaluate_dicts(run, qrels, threshold=1.0, ks=(10,))
    assert theirs.queries_without_relevant >= 20
    assert np.mean(mine["ap"]) == pytest.approx(theirs.map, abs=1e-12)
    assert np.mean(mine["rr"]) == pytest.approx(theirs.at("mrr", 10), abs=1e-12)
    assert np.mean(mine["ndcg"]) == pytest.approx(theirs.at("ndcg", 10), abs=1e-12)
    assert np.mean(mine["recall"]) == pytest.approx(theirs.at("recall", 10), abs=1e-12)
