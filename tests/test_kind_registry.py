"""One registry entry per task kind and app; a kind that lacks any part in any app is an error, not a fallback.

tasks_app/kind_parts.py finds each app's `kind_parts.PARTS` and `missing_parts()` lists what a kind lacks.
These tests show it finds every app, that every kind is complete, that taking any one part away is reported
(by the function and by Django's system check), and that the lookups give the values the old per-module
tables gave (behaviour unchanged).
"""
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.template.loader import render_to_string

from agreement.core.reports import main_agreement
from agreement.core.scoring import SCORERS
from annotation.core.forms import ANSWER_FORMS
from annotation.llm.prompting import PROMPTS
from kinds.kind_registry import kind_of_mteb_type
from kinds.sts.scorer import StsScorer
from tasks_app.core.kinds import KINDS, Config, ParsedRecord, TaskKind, ValidationProblem, get_kind
from tasks_app.kind_parts import app_parts, missing_parts


class HalfDoneKind(TaskKind):
    """A new kind whose author wrote its parsing and part of its entry, and nothing in the other apps."""

    name = "span_selection"
    record_fields = ("text",)
    gold_field = "spans"
    csv_fields = ()
    stratified = False
    averageable = False

    def parse_record(self, record: dict[str, Any], task: Any) -> ParsedRecord:
        return ParsedRecord(None, {"text": record["text"]}, None)

    def validate_answer(self, value: Any, task: Any, payload: dict[str, Any]) -> Any:
        return value


def test_every_app_with_kind_parts_is_found_in_flow_order() -> None:
    assert list(app_parts()) == ["tasks_app", "annotation", "agreement"]


def test_every_kind_has_every_part_in_every_app() -> None:
    assert missing_parts() == []


def test_a_half_done_kind_is_reported_part_by_part(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "span_selection", HalfDoneKind())
    assert missing_parts(["span_selection"]) == [
        "span_selection: tasks_app has no mteb_type",
        "span_selection: tasks_app has no payload_template",
        "span_selection: tasks_app has no payload template file",
        "span_selection: annotation has no answer form",
        "span_selection: annotation has no answer template",
        "span_selection: annotation has no LLM prompt",
        "span_selection: annotation has no keyboard help",
        "span_selection: agreement has no scorer",
        "span_selection: agreement has no main agreement metric",
        "span_selection: agreement has no MTEB score keys",
        "span_selection: agreement has no judge agreement",
        "span_selection: agreement has no model evaluation",
    ]


def test_a_kind_name_with_no_definition_lacks_everything() -> None:
    problems = missing_parts(["ner"])
    assert problems[:3] == ["ner: tasks_app has no definition", "ner: tasks_app has no record parser",
                            "ner: tasks_app has no answer validator"]
    assert len(problems) == 11 + 4 + 5  # tasks_app, annotation, agreement


def test_removing_the_prompt_of_a_real_kind_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(PROMPTS, "sts")
    assert missing_parts() == ["sts: annotation has no LLM prompt"]


def test_removing_an_answer_form_is_caught_with_its_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(ANSWER_FORMS, "pairwise")
    assert missing_parts() == ["pairwise: annotation has no answer form", "pairwise: annotation has no answer template"]


def test_removing_a_scorer_declaration_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(StsScorer, "mteb_score_keys")
    assert missing_parts() == ["sts: agreement has no MTEB score keys"]


def test_a_payload_template_that_does_not_exist_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(KINDS["likert"]), "payload_template", "tasks_app/payloads/_likret.html")
    assert missing_parts() == ["likert: tasks_app has no payload template file"]


def test_an_inherited_default_does_not_count_as_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(type(KINDS["clustering"]), "csv_fields")  # "no CSV" must be said, not assumed
    assert missing_parts() == ["clustering: tasks_app has no csv_fields"]


def test_django_system_check_fails_when_a_part_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    call_command("check")  # complete: passes
    monkeypatch.delitem(SCORERS, "reranking")
    with pytest.raises(SystemCheckError) as failure:
        call_command("check")
    assert "reranking: agreement has no scorer" in str(failure.value)
    assert "tasks_app.E001" in str(failure.value)


# --- each kind's declarations agree with its samples (kinds/<name>/samples.py) -----------------------------

def parsed_samples(name: str) -> list[Any]:
    """The kind's sample records as `parse_record` stores them (gold included), under its sample task."""
    samples = KINDS[name].samples
    return [KINDS[name].parse_record(record, Config(kind=name, **samples.task_fields)) for record in samples.records]


@pytest.mark.parametrize("name", list(KINDS))
def test_sampling_stratifies_the_kinds_whose_gold_is_one_label(name: str) -> None:
    golds = [parsed.gold for parsed in parsed_samples(name)]
    assert KINDS[name].stratified == all(isinstance(gold, str) for gold in golds), golds


@pytest.mark.parametrize("name", list(KINDS))
def test_judges_are_averaged_for_the_kinds_answered_on_a_scale_only(name: str) -> None:
    assert KINDS[name].averageable == (KINDS[name].default_scale is not None)


def test_each_kind_maps_to_an_mteb_task_type() -> None:
    """HUME's Table 1 has a column per MTEB task type: each kind declares the one its tasks are."""
    assert {kind.mteb_type for kind in KINDS.values()} <= {
        "BitextMining", "Classification", "MultilabelClassification", "Clustering", "PairClassification",
        "Regression", "Reranking", "Retrieval", "STS", "Summarization", "InstructionRetrieval",
        "InstructionReranking"}  # MTEB's text task types (mteb 2.20.0, TaskMetadata.type)


@pytest.mark.parametrize("name", list(KINDS))
def test_the_gold_field_is_the_one_sample_records_carry_gold_in(name: str) -> None:
    kind = KINDS[name]
    samples = kind.samples
    assert all(kind.gold_field in record for record in samples.records)
    assert all(parsed.gold is not None for parsed in parsed_samples(name))
    if samples.import_csv is not None:  # the CSV sample has every CSV field, its gold in the gold columns
        header, _ = samples.import_csv
        assert set(kind.csv_fields) <= set(header) and kind.csv_gold_columns in ((), (kind.gold_field,))
    else:
        assert kind.csv_fields == () and kind.csv_gold_columns == ()


@pytest.mark.parametrize("name", list(KINDS))
def test_main_agreement_is_the_scorers_as_hume_judges_a_task(name: str) -> None:
    """The scorer's `main_agreement` (with a likert-like `{axis}`, the task's first axis); if the report lacks
    it, or the task has no axes, the first agreement value there is."""
    main = SCORERS[name].main_agreement
    chosen_name = main.format(axis="overall")
    values = {"first_value": 0.1, chosen_name: 0.5, "krippendorff_alpha_coherence": 0.3}
    assert main_agreement(Config(kind=name, axes=["overall", "coherence"]), values) == chosen_name
    assert main_agreement(Config(kind=name, axes=["overall"]), {"first_value": 0.2}) == "first_value"
    if "{axis}" in main:
        assert main_agreement(Config(kind=name), values) == "first_value"  # no axes: first value


def test_a_main_agreement_metric_is_one_the_scorer_computes() -> None:
    for kind, scorer in SCORERS.items():
        if "{axis}" not in scorer.main_agreement:
            assert scorer.main_agreement in scorer.agreement_metrics, kind


def test_mteb_score_keys_name_scores_the_scorer_reports() -> None:
    assert SCORERS["reranking"].mteb_score_keys == {"map": "map", "mrr_at_10": "mrr@10", "ndcg_at_10": "ndcg@10"}
    assert SCORERS["classification"].mteb_score_keys == {
        "accuracy": "accuracy", "f1_macro": "f1", "f1_weighted": "f1_weighted"}
    assert SCORERS["likert"].mteb_score_keys is None


# --- what the registry renders ---------------------------------------------------------------------------

def test_the_formats_table_has_one_row_per_kind_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    html = render_to_string("tasks_app/_formats.html")
    assert html.count("<tr><td>") == len(KINDS)
    assert "<td>graded relevance</td>" in html
    assert "<code>context,text</code> + one column per axis" in html
    assert "<code>candidates[{id,text,relevant}]</code> (or MTEB&#x27;s positive[] / negative[] lists" in html
    monkeypatch.setitem(KINDS, "span_selection", HalfDoneKind())
    assert "<td>span selection</td>" in render_to_string("tasks_app/_formats.html")


def test_each_payload_template_shows_the_payload_and_never_gold() -> None:
    payload = {"query": "Q?", "instruction": None, "candidates": [{"id": "c1", "text": "first"}]}
    html = render_to_string(KINDS["reranking"].payload_template, {"payload": payload})
    assert '<code>c1</code> <span class="item-text" dir="auto">first</span>' in html
    assert "relevant" not in html


# --- the id + text lists of reranking and graded relevance share one reader --------------------------------

@pytest.mark.parametrize(("kind", "field", "noun"), [("reranking", "candidates", "candidate"),
                                                     ("graded_relevance", "documents", "document")])
def test_id_text_lists_are_read_the_same_way(kind: str, field: str, noun: str) -> None:
    config = Config(kind=kind)
    base = {"query": "q"}
    with pytest.raises(ValidationProblem) as problem:
        get_kind(kind).parse_record({**base, field: [{"id": 1, "text": "a"}, {"id": "1", "text": "b"}]}, config)
    assert (problem.value.field, problem.value.message) == (f"{field}[1].id", f"duplicate {noun} id '1'")
    with pytest.raises(ValidationProblem, match=rf"^{field}\[0\]: must be an object with id and text$"):
        get_kind(kind).parse_record({**base, field: ["a"]}, config)
    with pytest.raises(ValidationProblem, match=rf"^{field}: must be a non-empty list$"):
        get_kind(kind).parse_record({**base, field: []}, config)


def test_a_kind_is_found_by_its_mteb_task_type() -> None:
    """A retrieval pool makes a task of the "Retrieval" kind without naming it (agreement/retrieval/pooling.py)."""
    types = [kind.mteb_type for kind in KINDS.values()]
    assert all(kind_of_mteb_type(kind.mteb_type) == name for name, kind in KINDS.items()
               if types.count(kind.mteb_type) == 1)
    assert KINDS[kind_of_mteb_type("Retrieval")].mteb_type == "Retrieval"
    with pytest.raises(LookupError, match="0 registered kinds have the MTEB task type 'BitextMining'"):
        kind_of_mteb_type("BitextMining")
