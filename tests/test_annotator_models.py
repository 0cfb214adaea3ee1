"""Annotator models (measures/annotator_models.py) against crowd-kit 1.4.2 and a seeded simulated crowd.

crowd-kit's documented toy example is the "toy YSDA dataset" of its test suite (Toloka/crowd-kit,
tests/conftest.py, fixtures toy_answers_df and toy_ground_truth_df): five workers, five yes/no tasks,
truth t1 yes, t2 yes, t3 no, t4 yes, t5 no; its tests (tests/aggregation/test_ds_aggregation.py,
test_glad_aggregation.py, test_mace_aggregation.py) assert that Dawid-Skene, one-coin Dawid-Skene, GLAD and
MACE recover that truth. Here the same data goes through our module, which must give crowd-kit's own answer
and crowd-kit's own per-worker numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowdkit import aggregation as ck

from measures import annotator_models as am

TOY = [  # (worker, task, label), as in crowd-kit's toy_answers_df
    ("w1", "t1", "no"), ("w1", "t2", "yes"), ("w1", "t3", "yes"), ("w1", "t4", "yes"), ("w1", "t5", "yes"),
    ("w2", "t1", "yes"), ("w2", "t2", "yes"), ("w2", "t3", "no"), ("w2", "t4", "yes"), ("w2", "t5", "no"),
    ("w3", "t2", "yes"), ("w3", "t3", "no"), ("w3", "t4", "yes"), ("w3", "t5", "no"),
    ("w4", "t1", "yes"), ("w4", "t2", "no"), ("w4", "t3", "yes"), ("w4", "t4", "yes"), ("w4", "t5", "no"),
    ("w5", "t1", "no"), ("w5", "t2", "no"), ("w5", "t3", "no"), ("w5", "t4", "yes"), ("w5", "t5", "no"),
]
TOY_TRUTH = {"t1": "yes", "t2": "yes", "t3": "no", "t4": "yes", "t5": "no"}
TOY_TRIPLES = [(task, worker, label) for worker, task, label in TOY]
TOY_FRAME = pd.DataFrame(TOY, columns=["worker", "task", "label"])
CROWD_KIT_DEFAULTS = {"dawid-skene": ck.DawidSkene, "one-coin": ck.OneCoinDawidSkene, "glad": ck.GLAD, "mace": ck.MACE}


@pytest.mark.parametrize("method", ["dawid-skene", "one-coin", "glad", "mace"])
def test_each_model_recovers_the_toy_truth_as_crowd_kit_does(method: str) -> None:
    ours = am.fit(method, TOY_TRIPLES)
    assert ours.consensus == TOY_TRUTH
    theirs = CROWD_KIT_DEFAULTS[method]().fit_predict(TOY_FRAME)  # crowd-kit with its defaults
    assert ours.consensus == theirs.to_dict()


def test_majority_is_crowd_kits_majority_vote_and_skill_is_agreement_with_it() -> None:
    ours = am.fit("majority", TOY_TRIPLES)
    assert ours.consensus == ck.MajorityVote().fit_predict(TOY_FRAME).to_dict()
    # w3 answered t2..t5 and matches the majority on all four; w4 matches on t2? no (t2 yes 3–2), t4, t5: 2 of 5
    assert ours.skills["w3"] == pytest.approx(1.0)
    assert ours.skills["w4"] == pytest.approx(sum(
        ours.consensus[t] == label for w, t, label in TOY if w == "w4") / 5)


def test_dawid_skene_accuracy_is_the_prior_weighted_diagonal_of_crowd_kits_confusion_matrices() -> None:
    ours = am.fit("dawid-skene", TOY_TRIPLES)
    model = ck.DawidSkene().fit(TOY_FRAME)
    for worker in ("w1", "w2", "w3", "w4", "w5"):
        errors = model.errors_.loc[worker]  # rows: the worker's answer, columns: the true label
        expected = sum(model.priors_[k] * errors.loc[k, k] for k in ("no", "yes"))
        assert ours.skills[worker] == pytest.approx(expected)
        # our confusion rows are true labels (labels sorted: no, yes): row "yes" = P(answer | true yes)
        assert ours.confusion[worker][1] == pytest.approx([errors.loc["no", "yes"], errors.loc["yes", "yes"]])
    assert ours.skills["w2"] == pytest.approx(1.0)  # w2 agrees with the truth on all five


def test_one_coin_glad_and_mace_skills_are_crowd_kits() -> None:
    assert am.fit("one-coin", TOY_TRIPLES).skills == pytest.approx(
        ck.OneCoinDawidSkene().fit(TOY_FRAME).skills_.to_dict())
    assert am.fit("glad", TOY_TRIPLES).skills == pytest.approx(ck.GLAD().fit(TOY_FRAME).alphas_.to_dict())
    # our MACE runs one restart: crowd-kit's default ten all start from the same seeded draw, so they agree
    mace = am.fit("mace", TOY_TRIPLES)
    default = ck.MACE().fit(TOY_FRAME)
    workers = pd.factorize(TOY_FRAME["worker"])[1]
    assert mace.skills == pytest.approx(dict(zip(workers, default.spamming_[:, 1], strict=True)))
    assert mace.spam == pytest.approx({w: 1 - c for w, c in mace.skills.items()})


def simulated_crowd(seed: int = 7, n_items: int = 300) -> tuple[list[am.Triple], dict[int, str],
                                                                  dict[str, np.ndarray]]:
    """Three classes with priors .5/.3/.2; five annotators with planted confusion matrices (rows: true class,
    columns: answer) who label every item, and two spammers: one always answers "a", one answers at random."""
    rng = np.random.default_rng(seed)
    classes = ["a", "b", "c"]
    truth = rng.choice(3, size=n_items, p=[0.5, 0.3, 0.2])
    planted = {
        "good1": np.array([[.9, .05, .05], [.1, .8, .1], [.05, .15, .8]]),
        "good2": np.array([[.85, .1, .05], [.05, .9, .05], [.1, .1, .8]]),
        "good3": np.array([[.8, .1, .1], [.2, .7, .1], [.1, .2, .7]]),
        "biased": np.array([[.7, .3, 0], [.05, .9, .05], [0, .3, .7]]),
        "good4": np.array([[.95, .03, .02], [.1, .85, .05], [.05, .05, .9]]),
    }
    triples: list[am.Triple] = []
    for name, matrix in planted.items():
        answers = [rng.choice(3, p=matrix[t]) for t in truth]
        triples += [(i, name, classes[a]) for i, a in enumerate(answers)]
    triples += [(i, "always_a", "a") for i in range(n_items)]
    triples += [(i, "random", classes[a]) for i, a in enumerate(rng.integers(0, 3, size=n_items))]
    return triples, {i: classes[t] for i, t in enumerate(truth)}, planted


def test_dawid_skene_recovers_the_planted_confusion_matrices() -> None:
    triples, truth, planted = simulated_crowd()
    result = am.fit("dawid-skene", triples)
    assert result.labels == ["a", "b", "c"]
    assert am.accuracy_against(result.consensus, truth)[0] >= 0.95
    for name, matrix in planted.items():
        # Tolerances: against the confusion matrix the answers actually show given the truth, 0.05 (what EM on
        # an estimated truth may move); against the planted one, 0.12: 300 items give about 150/90/60 per
        # class, and an entry's sampling sd on 60 items is at most sqrt(.25/60) ≈ 0.065, so 0.12 is ~2 sd.
        given = [(truth[i], label) for i, who, label in triples if who == name]
        empirical = np.zeros((3, 3))
        for true_label, label in given:
            empirical["abc".index(true_label), "abc".index(label)] += 1
        empirical /= empirical.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(result.confusion[name], empirical, atol=0.05, err_msg=name)
        np.testing.assert_allclose(result.confusion[name], matrix, atol=0.12, err_msg=name)
    assert result.skills["always_a"] < min(result.skills[name] for name in planted)


def test_spammers_get_the_lowest_mace_competence_and_glad_ability() -> None:
    triples, truth, planted = simulated_crowd()
    mace = am.fit("mace", triples)
    assert max(mace.skills["always_a"], mace.skills["random"]) < min(mace.skills[name] for name in planted)
    assert min(mace.spam["always_a"], mace.spam["random"]) > max(mace.spam[name] for name in planted)
    assert am.accuracy_against(mace.consensus, truth)[0] >= 0.95
    glad = am.fit("glad", triples)
    assert max(glad.skills["always_a"], glad.skills["random"]) < min(glad.skills[name] for name in planted)


def test_report_block_scores_each_consensus_against_gold() -> None:
    block = am.report_block(TOY_TRIPLES, {"t1": "yes", "t3": "no"}, methods=("majority", "dawid-skene"))
    assert block["library"] == "crowd-kit 1.4.2"
    ds = block["models"]["dawid-skene"]
    assert (ds["consensus_accuracy"], ds["n_units_scored"], ds["skill_name"]) == (1.0, 2, "accuracy")
    assert [a["name"] for a in ds["annotators"]] == ["w1", "w2", "w3", "w4", "w5"]
    assert all(len(a["confusion"]) == 2 for a in ds["annotators"])
    majority = block["models"]["majority"]  # crowd-kit's majority breaks the 2–2 tie of t1 as "no": wrong
    assert majority["consensus_accuracy"] == pytest.approx(0.5)


def test_an_unknown_model_name_is_refused_with_the_accepted_names() -> None:
    with pytest.raises(am.UnknownAggregation, match="unknown aggregation 'zen'; expected one of: majority, "
                                                     "dawid-skene, one-coin, glad, mace"):
        am.fit("zen", TOY_TRIPLES)


def test_answer_spread_flags_the_constant_spammer_of_the_simulated_crowd_and_no_one_else() -> None:
    triples, _, planted = simulated_crowd()
    spread = {row["name"]: row for row in am.answer_spread(triples)["annotators"]}
    assert spread["always_a"]["modal_share"] == 1.0 and spread["always_a"]["entropy_bits"] == 0.0
    assert spread["always_a"]["straightlining"] is True
    assert [name for name, row in spread.items() if row["straightlining"]] == ["always_a"]
    for name in planted:  # careful annotators on priors .5/.3/.2 (the biased one leans to "b"): well under .9
        assert spread[name]["modal_share"] < 0.7, name
    assert spread["random"]["entropy_bits"] > 1.5  # log2(3) ≈ 1.585 for uniform answers


def test_answer_spread_worked_by_hand() -> None:
    # 10 answers: 9 "x", 1 "y". modal share 9/10 = 0.9 (at the threshold: flagged); entropy
    # -(0.9 log2 0.9 + 0.1 log2 0.1) = 0.1368 + 0.3322 = 0.4690 bits. Pool: with the other annotators' 10 "y"
    # and 9 "z", "x" is 9 of 29 answers. Nine answers of one label are under the minimum of 10: not flagged.
    triples = [(i, "nine_x", "x") for i in range(9)] + [(9, "nine_x", "y")]
    triples += [(i, "all_y", "y") for i in range(10)] + [(i, "few", "z") for i in range(9)]
    spread = {row["name"]: row for row in am.answer_spread(triples)["annotators"]}
    assert spread["nine_x"]["modal_share"] == pytest.approx(0.9)
    assert spread["nine_x"]["entropy_bits"] == pytest.approx(0.4690, abs=1e-4)
    assert spread["nine_x"]["pool_share"] == pytest.approx(9 / 29)
    assert spread["nine_x"]["straightlining"] and spread["all_y"]["straightlining"]
    assert not spread["few"]["straightlining"] and spread["few"]["n_answers"] == 9
