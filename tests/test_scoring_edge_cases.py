"""Edge cases are answered, never crashed on (docs/reports.md): a single annotator, one category only,
every item skipped, only LLM annotators, unknown kinds — and every report is strict JSON."""

import json

import pytest

from agreement.core.scoring import SCORERS, score_task
from measures import metrics as m
from tests.kind_samples import SampleTable

# One small, valid task per kind (answers from alice and bob, and the gold): each kind's own (its samples.py).
TASKS = SampleTable("scorer_sample")


def only(answers: dict, name: str) -> dict:
    return {item: {name: votes[name]} for item, votes in answers.items()}


@pytest.mark.parametrize("kind", sorted(SCORERS))
def test_every_kind_gives_a_strict_json_report_with_the_stable_keys(kind: str) -> None:
    answers, gold = TASKS[kind]
    report = score_task(kind, answers, gold)
    json.dumps(report, allow_nan=False)
    assert report["kind"] == kind
    assert report["human"]["main_score"] is not None
    assert set(report["human"]) >= {"main_metric", "main_score", "ci_low", "ci_high", "ci_method", "scores"}
    assert {"name", "agent", "n_answers", "n_skipped", "scores"} <= set(report["annotators"][0])
    assert set(report["flags"]) >= {"low_agreement", "message"}


@pytest.mark.parametrize("kind", sorted(SCORERS))
def test_a_single_annotator_gets_scores_but_agreement_is_not_applicable(kind: str) -> None:
    answers, gold = TASKS[kind]
    report = score_task(kind, only(answers, "alice"), gold)
    assert report["n_annotators"] == 1
    assert all(value is None for value in report["agreement"].values())
    assert set(report["agreement_notes"].values()) == {m.SINGLE_ANNOTATOR}
    assert report["agreement_bands"] == {}
    assert report["flags"]["low_agreement"] is False
    assert report["human"]["main_score"] is not None
    json.dumps(report, allow_nan=False)


@pytest.mark.parametrize("kind", sorted(SCORERS))
def test_all_items_skipped_is_reported_not_crashed(kind: str) -> None:
    answers, gold = TASKS[kind]
    skipped = {item: dict.fromkeys(votes) for item, votes in answers.items()}
    report = score_task(kind, skipped, gold)
    json.dumps(report, allow_nan=False)
    assert report["n_answers"] == 0
    assert report["n_skipped"] == 2 * len(answers)
    assert report["human"]["main_score"] is None
    assert report["human"]["reason"]
    assert {"item": next(iter(answers)), "reason": "no answers (all skipped)"} in report["excluded"]
    assert report["disagreement"] == []


def test_all_answers_in_one_category_leave_kappa_undefined_with_a_reason() -> None:
    answers = {i: {"alice": "joy", "bob": "joy"} for i in range(5)}
    report = score_task("classification", answers, dict.fromkeys(range(5), "joy"))
    assert report["agreement"]["fleiss_kappa"] is None
    assert "one category" in report["agreement_notes"]["fleiss_kappa"]
    assert report["agreement"]["percent_agreement"] == 1.0
    assert report["flags"]["low_agreement"] is False  # undefined is not low
    assert report["human"]["main_score"] == 1.0


def test_only_llm_annotators_means_no_human_score_but_llm_scores() -> None:
    answers, gold = TASKS["classification"]
    report = score_task("classification", answers, gold, annotator_agents={"alice": "llm", "bob": "llm"})
    assert report["n_annotators"] == 0
    assert report["human"]["main_score"] is None
    assert report["human"]["reason"] == "n/a: no human annotators"
    assert report["llm"]["main_score_mean"] == pytest.approx(0.75)  # alice 1.0, bob 0.5
    assert set(report["agreement_notes"].values()) == {"n/a: no human annotators"}


def test_gold_items_nobody_annotated_are_listed_as_excluded() -> None:
    answers, gold = TASKS["classification"]
    report = score_task("classification", answers, {**gold, 3: "x"})
    assert {"item": 3, "reason": "no answers"} in report["excluded"]
    assert report["n_items"] == 2


def test_fleiss_note_says_when_only_part_of_the_items_had_equal_rater_counts() -> None:
    answers = {1: {"a": "x", "b": "x", "c": "y"}, 2: {"a": "y", "b": "y", "c": "y"}, 3: {"a": "x", "b": "y"}}
    report = score_task("classification", answers, {1: "x", 2: "y", 3: "x"})
    assert report["agreement"]["fleiss_kappa"] is not None
    assert report["agreement_notes"]["fleiss_kappa"] == (
        "computed on the 2 items with 3 answers each (of 3 answered by two or more annotators, 3 answered)")


def test_an_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown task kind"):
        score_task("ranking", {}, {})


def test_an_empty_task_is_answered() -> None:
    report = score_task("sts", {}, {})
    assert (report["n_items"], report["n_annotators"], report["human"]["main_score"]) == (0, 0, None)
    json.dumps(report, allow_nan=False)
