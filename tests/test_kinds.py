"""Each task kind validates its records and answers in one place (tasks_app/core/kinds.py)."""
import pytest

from kinds.kind_registry import PACKAGES
from tasks_app.core.kinds import KINDS, Config, ValidationProblem, get_kind

SENTIMENT = Config(kind="classification", labels=["negative", "neutral", "positive"])
STS = Config(kind="sts")
LIKERT = Config(kind="likert", axes=["overall", "coherence"])
GRADED = Config(kind="graded_relevance")


def test_every_registered_package_is_a_kind_named_after_its_folder() -> None:
    assert list(KINDS) == [package.rpartition(".")[2] for package in PACKAGES]


def test_it_names_an_unknown_kind() -> None:
    with pytest.raises(ValidationProblem, match="unknown task kind 'ner'"):
        get_kind("ner")


def test_classification_keeps_gold_apart_from_the_payload() -> None:
    parsed = get_kind("classification").parse_record({"id": 7, "text": "Fine.", "label": "neutral"}, SENTIMENT)
    assert parsed.payload == {"text": "Fine."}
    assert parsed.gold == "neutral"
    assert parsed.external_id == "7"


def test_it_rejects_an_unknown_label_naming_the_field() -> None:
    with pytest.raises(ValidationProblem) as problem:
        get_kind("classification").parse_record({"text": "x", "label": "angry"}, SENTIMENT)
    assert problem.value.field == "label"
    assert "unknown label 'angry'" in problem.value.message


def test_it_rejects_a_text_of_the_wrong_type() -> None:
    with pytest.raises(ValidationProblem, match="text: must be a string, got int"):
        get_kind("classification").parse_record({"text": 42}, SENTIMENT)


def test_it_rejects_sts_score_above_scale() -> None:
    with pytest.raises(ValidationProblem, match="5.5 is outside the scale 0–5"):
        get_kind("sts").parse_record({"sentence1": "a", "sentence2": "b", "score": 5.5}, STS)


def test_sts_answers_must_lie_on_the_slider_step() -> None:
    kind = get_kind("sts")
    assert kind.validate_answer(3.5, STS, {}) == 3.5
    assert kind.validate_answer("4", STS, {}) == 4
    with pytest.raises(ValidationProblem, match="not on the scale's step of 0.5"):
        kind.validate_answer(3.3, STS, {})
    with pytest.raises(ValidationProblem, match="must be a number, got a boolean"):
        kind.validate_answer(True, STS, {})


def test_reranking_shuffles_mteb_positives_so_their_order_does_not_reveal_gold() -> None:
    record = {"query": "q", "positive": ["p1", "p2", "p3"], "negative": ["n1", "n2", "n3", "n4"]}
    parsed = get_kind("reranking").parse_record(record, Config(kind="reranking"))
    texts = [c["text"] for c in parsed.payload["candidates"]]
    assert sorted(texts) == ["n1", "n2", "n3", "n4", "p1", "p2", "p3"]
    assert texts[:3] != ["p1", "p2", "p3"]
    assert sum(parsed.gold.values()) == 3
    assert {c["id"] for c in parsed.payload["candidates"]} == set(parsed.gold)
    assert all("relevant" not in c for c in parsed.payload["candidates"])
    again = get_kind("reranking").parse_record(record, Config(kind="reranking"))
    assert again == parsed


def test_reranking_answers_must_judge_every_candidate() -> None:
    payload = {"candidates": [{"id": "c1", "text": "a"}, {"id": "c2", "text": "b"}]}
    kind = get_kind("reranking")
    assert kind.validate_answer({"c1": 1, "c2": False}, Config(kind="reranking"), payload) == {"c1": 1, "c2": 0}
    with pytest.raises(ValidationProblem, match=r"candidates not judged: \['c2'\]"):
        kind.validate_answer({"c1": 1}, Config(kind="reranking"), payload)


def test_clustering_needs_one_cluster_id_per_text() -> None:
    kind = get_kind("clustering")
    parsed = kind.parse_record({"sentences": ["a", "b", "c"], "labels": ["x", "y", "x"]}, Config(kind="clustering"))
    assert parsed.gold == ["x", "y", "x"]
    assert kind.validate_answer([1, 2, 1], Config(kind="clustering"), parsed.payload) == ["1", "2", "1"]
    with pytest.raises(ValidationProblem, match="must be a list of 3 cluster ids"):
        kind.validate_answer([1, 2], Config(kind="clustering"), parsed.payload)


def test_clustering_gold_must_match_the_number_of_sentences() -> None:
    with pytest.raises(ValidationProblem, match="labels: must be a list of 2 labels"):
        get_kind("clustering").parse_record({"sentences": ["a", "b"], "labels": ["x"]}, Config(kind="clustering"))


def test_graded_relevance_scores_every_document_on_the_0_to_10_scale() -> None:
    record = {"query": "q", "documents": [{"id": "d1", "text": "a", "score": 9}, {"id": "d2", "text": "b", "score": 2}]}
    parsed = get_kind("graded_relevance").parse_record(record, GRADED)
    assert parsed.gold == {"d1": 9.0, "d2": 2.0}
    answer = get_kind("graded_relevance").validate_answer({"d1": 10, "d2": 0}, GRADED, parsed.payload)
    assert answer == {"d1": 10, "d2": 0}
    with pytest.raises(ValidationProblem, match="11 is outside the scale 0–10"):
        get_kind("graded_relevance").validate_answer({"d1": 11, "d2": 0}, GRADED, parsed.payload)


def test_pairwise_accepts_a_b_or_tie() -> None:
    kind = get_kind("pairwise")
    assert kind.validate_answer("B", Config(kind="pairwise"), {}) == "b"
    with pytest.raises(ValidationProblem, match="must be one of a, b, tie"):
        kind.validate_answer("c", Config(kind="pairwise"), {})


def test_likert_rates_every_axis_on_1_to_7() -> None:
    kind = get_kind("likert")
    assert kind.validate_answer({"overall": 7, "coherence": 1}, LIKERT, {}) == {"overall": 7, "coherence": 1}
    with pytest.raises(ValidationProblem, match="0 is outside the scale 1–7"):
        kind.validate_answer({"overall": 0, "coherence": 1}, LIKERT, {})
    with pytest.raises(ValidationProblem, match="must rate every axis"):
        kind.validate_answer({"overall": 3}, LIKERT, {})


def test_likert_gold_from_csv_columns_per_axis() -> None:
    parsed = get_kind("likert").parse_record({"context": "c", "text": "t", "overall": "6", "coherence": "5"}, LIKERT)
    assert parsed.gold == {"overall": 6, "coherence": 5}
