"""Partition metrics: sklearn's documented examples (Hubert & Arabie 1985 ARI; Rosenberg &
Hirschberg 2007 V-measure; Vinh et al. 2010 AMI), with the hand computation where short."""

import pytest

from measures import metrics as m


def test_ari_reproduces_the_documented_examples() -> None:
    # sklearn adjusted_rand_score docstring. Hand check of [0,0,1,2] vs [0,0,1,1]:
    # Σ C(n_ij,2) = 1; rows Σ C(a_i,2) = 1; cols Σ C(b_j,2) = 2; expected = 1·2/C(4,2) = 1/3;
    # max = (1 + 2)/2 = 1.5 → ARI = (1 − 1/3)/(1.5 − 1/3) = 4/7 = 0.5714
    assert m.adjusted_rand([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert m.adjusted_rand([0, 0, 1, 2], [0, 0, 1, 1]) == pytest.approx(4 / 7, abs=1e-12)
    assert m.adjusted_rand([0, 0, 0, 0], [0, 1, 2, 3]) == pytest.approx(0.0)
    assert m.adjusted_rand([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)


def test_v_measure_reproduces_the_documented_examples() -> None:
    # [0,0,1,2] (classes) vs [0,0,1,1] (clusters): H(C) = 1.5 bits, H(C|K) = 0.5 → h = 2/3;
    # every class sits in one cluster → c = 1; V = 2·(2/3)·1/(2/3 + 1) = 0.8
    assert m.v_measure([0, 0, 1, 2], [0, 0, 1, 1]) == pytest.approx(0.8, abs=1e-12)
    assert m.v_measure([0, 1, 2, 3], [0, 0, 1, 1]) == pytest.approx(0.67, abs=5e-3)
    assert m.v_measure([0, 0, 0, 0], [0, 1, 2, 3]) == pytest.approx(0.0)


def test_ami_reproduces_the_documented_examples() -> None:
    assert m.adjusted_mutual_info([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert m.adjusted_mutual_info([0, 0, 0, 0], [0, 1, 2, 3]) == pytest.approx(0.0)


def test_only_the_partition_counts_not_the_cluster_ids() -> None:
    # Annotators type free cluster ids, strings or numbers, even mixed.
    assert m.adjusted_rand(["a", "a", "b", "c"], [7, 7, "x", "x"]) == pytest.approx(4 / 7)
    assert m.v_measure(["x", "x", "y", "y"], [2, 2, 1, 1]) == pytest.approx(1.0)


def test_ari_mean_over_annotator_pairs() -> None:
    parts = [[0, 0, 1, 1], ["a", "a", "b", "b"], [0, 0, 1, 2]]
    # pairs: (1,2) = 1; (1,3) = 4/7; (2,3) = 4/7
    assert m.ari_mean(parts) == pytest.approx((1 + 8 / 7) / 3, abs=1e-12)
    assert m.ari_mean.explain(parts[:1]) == (None, m.SINGLE_ANNOTATOR)


def test_two_item_clustering_is_answered() -> None:
    assert m.ari_mean([[0, 1], [5, 5]]) == pytest.approx(0.0)
    assert m.ari_mean([[0, 1], [1, 0]]) == pytest.approx(1.0)
    assert m.v_measure([0, 1], [0, 0]) == pytest.approx(0.0)


def test_empty_partition_is_undefined() -> None:
    assert m.v_measure.explain([], [])[0] is None
