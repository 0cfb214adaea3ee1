"""Degenerate tasks get an answer, never a crash: `report` computes them in-process with the worker's code."""
from __future__ import annotations

import pytest

from agreement.models import Report
from tests.report_builders import answers_from_columns, build_task, cli_report, import_answers

pytestmark = pytest.mark.django_db


def classification(name: str, n: int, gold: str | None = "a") -> object:
    records = [{"text": f"text {i}", **({"label": gold} if gold else {})} for i in range(1, n + 1)]
    return build_task("classification", name, records, labels=["a", "b", "c"])


def test_a_single_annotator_gets_scores_and_agreement_is_not_applicable() -> None:
    task = classification("solo", 4)
    import_answers(task, answers_from_columns({"alice": ["a", "a", "b", "a"]}))

    doc = cli_report(task)

    assert doc["n_annotators"] == 1
    assert doc["agreement"]["fleiss_kappa"] is None
    assert doc["agreement_notes"]["fleiss_kappa"] == "n/a: single annotator"
    assert doc["human"]["main_score"] == pytest.approx(0.75)
    assert doc["flags"]["low_agreement"] is False
    assert "computed" in doc["_cli_said"]
    assert Report.objects.get(task=task).computed_in == "cli"


def test_answers_all_in_one_category_leave_kappa_undefined_with_the_reason() -> None:
    task = classification("one-category", 5)
    import_answers(task, answers_from_columns({"alice": ["a"] * 5, "bob": ["a"] * 5}))

    doc = cli_report(task)

    assert doc["agreement"]["fleiss_kappa"] is None
    assert "one category" in doc["agreement_notes"]["fleiss_kappa"]
    assert doc["agreement"]["percent_agreement"] == 1.0
    assert doc["human"]["main_score"] == 1.0


def test_constant_ratings_leave_spearman_undefined() -> None:
    task = build_task("sts", "constant", [{"sentence1": f"s{i}", "sentence2": "t", "score": i % 5} for i in range(6)])
    import_answers(task, answers_from_columns({"alice": [3.0] * 6, "bob": [3.0] * 6}))

    doc = cli_report(task)

    assert doc["agreement"]["spearman_mean"] is None
    assert "constant" in doc["agreement_notes"]["spearman_mean"]
    assert doc["human"]["main_score"] is None and doc["human"]["reason"]
    assert doc["flags"]["low_agreement"] is False


def test_a_query_without_relevant_candidates_scores_zero_in_map_and_is_counted() -> None:
    qrels = {"q1": {"c1": 1, "c2": 0}, "q2": {"c1": 0, "c2": 0}}
    records = [{"id": q, "query": q, "candidates": [{"id": c, "text": c, "relevant": r} for c, r in rel.items()]}
               for q, rel in qrels.items()]
    task = build_task("reranking", "no-relevant", records)
    import_answers(task, [{"item": q, "annotator": "alice", "value": {"c1": 1, "c2": 0}} for q in qrels])

    doc = cli_report(task)

    assert doc["human"]["main_score"] == 0.5  # q1 AP 1, q2 (no relevant candidate) 0, as pytrec_eval and MTEB
    assert doc["human"]["n_queries_without_relevant"] == 1
    assert not any(e["item"] == "q2" for e in doc_items(task))


def doc_items(task: object) -> list[dict]:
    return cli_report(task, "--items")["excluded"]


def test_all_items_skipped_reports_zero_answers_and_no_score() -> None:
    task = classification("all-skipped", 3)
    import_answers(task, [{"item": str(i), "annotator": who, "skipped": True, "skip_reason": "unreadable"}
                          for i in (1, 2, 3) for who in ("alice", "bob")])

    doc = cli_report(task)

    assert (doc["n_answers"], doc["n_skipped"]) == (0, 6)
    assert doc["human"]["main_score"] is None
    assert all(value is None for value in doc["agreement"].values())
    assert [a["n_skipped"] for a in doc["annotators"]] == [3, 3]


def test_clustering_a_set_of_two_texts_is_answered() -> None:
    task = build_task("clustering", "two-texts", [{"sentences": ["x", "y"], "labels": ["1", "2"]}])
    import_answers(task, answers_from_columns({"alice": [["a", "b"]], "bob": [["a", "a"]]}))

    doc = cli_report(task)

    assert doc["n_items"] == 1 and doc["n_annotators"] == 2
    assert doc["agreement"]["ari_mean"] == pytest.approx(0.0) or doc["agreement"]["ari_mean"] is None
    assert doc["human"]["main_metric"] == "v_measure"
    assert [a["scores"]["v_measure"] for a in doc["annotators"]] == [1.0, 0.0]


def test_llm_annotators_are_scored_but_never_count_toward_human_agreement() -> None:
    task = classification("with-llm", 4)
    import_answers(task, answers_from_columns({"alice": ["a", "a", "b", "a"], "bob": ["a", "b", "b", "a"]}))
    import_answers(task, answers_from_columns({"gpt": ["c", "c", "c", "c"]}, agent="llm"))

    doc = cli_report(task)

    assert doc["n_annotators"] == 2
    assert doc["llm"]["annotators"] == ["gpt"] and doc["llm"]["included_in_human"] is False
    assert {a["name"]: a["agent"] for a in doc["annotators"]} == {"alice": "human", "bob": "human", "gpt": "llm"}
    assert doc["agreement"]["percent_agreement"] == pytest.approx(0.75)  # alice and bob agree on 3 of 4


def test_the_report_counts_flags_per_annotator() -> None:
    task = classification("flags", 2)
    import_answers(task, [{"item": "1", "annotator": "alice", "value": "a", "flag_comment": "two labels fit"},
                          {"item": "2", "annotator": "alice", "value": "a"},
                          {"item": "1", "annotator": "bob", "value": "b", "flag_comment": "typo in text"}])

    doc = cli_report(task)

    assert doc["n_flagged"] == 2 and doc["n_flagged_items"] == 1
    assert {a["name"]: a["n_flagged"] for a in doc["annotators"]} == {"alice": 1, "bob": 1}
