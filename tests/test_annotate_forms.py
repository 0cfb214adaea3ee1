"""The answer forms: posted fields become the kind's value format, and the kind's validation decides."""
from __future__ import annotations

import pytest

from annotation.core.forms import ANSWER_FORMS, FlagForm, SkipForm, answer_form_for, scale_points
from tasks_app.core.kinds import KINDS
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.loop_data import RECORDS, add_items, make_task

pytestmark = pytest.mark.django_db


def item_of(kind: str, **overrides):
    task = make_task(kind, **overrides)
    return task, add_items(task, RECORDS[kind][:1])[0]


def value_of(form):
    assert form.is_valid(), form.errors
    return form.cleaned_data["value"]


def test_there_is_one_form_per_kind_and_each_has_its_partial():
    assert set(ANSWER_FORMS) == set(KINDS)
    for kind, form in ANSWER_FORMS.items():
        assert form.template == f"kinds/{kind}/answer.html"


def test_classification_form_returns_the_chosen_label():
    task, item = item_of("classification")
    form = answer_form_for(task, item.payload, {"label": "negative"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["value"] == "negative"


def test_classification_form_rejects_a_label_outside_the_set():
    task, item = item_of("classification")
    form = answer_form_for(task, item.payload, {"label": "sarcastic"})
    assert not form.is_valid()
    assert "label" in form.errors


def test_reranking_form_maps_positional_fields_to_candidate_ids():
    task, item = item_of("reranking")
    form = answer_form_for(task, item.payload, {"c0": "1", "c1": "0", "c2": "1"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["value"] == {"p1": 1, "p2": 0, "p3": 1}


def test_reranking_form_refuses_an_unjudged_candidate():
    task, item = item_of("reranking")
    form = answer_form_for(task, item.payload, {"c0": "1", "c2": "1"})
    assert not form.is_valid()
    assert form.errors["c1"] == ["Judge this candidate."]


def test_graded_relevance_form_refuses_a_score_off_the_step_and_names_the_document():
    task, item = item_of("graded_relevance")
    form = answer_form_for(task, item.payload, {"d0": "7", "d1": "2.5"})
    assert not form.is_valid()
    assert form.errors["d1"] == ["2.5 is not on the scale's step of 1"]
    form = answer_form_for(task, item.payload, {"d0": "7", "d1": "2"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["value"] == {"x1": 7, "x2": 2}


def test_sts_form_needs_a_score_and_keeps_it_on_the_scale():
    task, item = item_of("sts")
    assert answer_form_for(task, item.payload, {"score": ""}).errors["score"] == ["Move the slider or type a score."]
    assert answer_form_for(task, item.payload, {"score": "5.5"}).errors["score"] == ["5.5 is outside the scale 0–5"]
    form = answer_form_for(task, item.payload, {"score": "3.5"})
    assert form.is_valid() and form.cleaned_data["value"] == 3.5


def test_sts_form_uses_the_tasks_own_scale_and_step():
    task, item = item_of("sts", scale_min=1, scale_max=7, scale_step=1)
    errors = answer_form_for(task, item.payload, {"score": "6.5"}).errors
    assert errors["score"] == ["6.5 is not on the scale's step of 1"]
    assert value_of(answer_form_for(task, item.payload, {"score": "7"})) == 7


def test_pairwise_form_accepts_a_b_and_tie_only():
    task, item = item_of("pairwise")
    assert value_of(answer_form_for(task, item.payload, {"choice": "tie"})) == "tie"
    assert not answer_form_for(task, item.payload, {"choice": "c"}).is_valid()


def test_likert_form_rates_every_axis():
    task, item = item_of("likert")
    form = answer_form_for(task, item.payload, {"a0": "6", "a1": "3"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["value"] == {"overall": 6, "coherence": 3}
    assert answer_form_for(task, item.payload, {"a0": "6"}).errors["a1"] == ["Rate this axis."]
    assert "a0" in answer_form_for(task, item.payload, {"a0": "8", "a1": "3"}).errors


def test_clustering_form_needs_a_cluster_for_every_text_and_keeps_free_names():
    task, item = item_of("clustering")
    data = {"t0": "sport", "t1": "sport", "t2": "sky", "t3": "sky", "t4": " sport "}
    form = answer_form_for(task, item.payload, data)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["value"] == ["sport", "sport", "sky", "sky", "sport"]
    form = answer_form_for(task, item.payload, {**data, "t3": ""})
    assert form.errors["t3"] == ["Give this text a cluster."]


def test_a_stored_answer_fills_the_form_for_revision():
    task, item = item_of("reranking")
    form = answer_form_for(task, item.payload, answer={"p1": 0, "p2": 1, "p3": 0})
    assert [row["value"] for row in form.rows()] == ["0", "1", "0"]
    task, item = item_of("likert", name="likert 2")
    rows = answer_form_for(task, item.payload, answer={"overall": 5, "coherence": 2}).rows()
    assert [[p["value"] for p in row["points"] if p["checked"]] for row in rows] == [["5"], ["2"]]


def test_scale_points_show_whole_numbers_without_decimals():
    assert scale_points(1, 7, 1) == [1, 2, 3, 4, 5, 6, 7]
    assert scale_points(0, 1, 0.25) == [0, 0.25, 0.5, 0.75, 1]


def test_skip_needs_a_reason_and_other_needs_a_note():
    assert SkipForm({}).errors["skip_reason"] == ["Choose why you skip."]
    assert SkipForm({"skip_reason": "other"}).errors["skip_note"] == ["Say why you skip this item."]
    form = SkipForm({"skip_reason": "language", "skip_note": "Danish dialect"})
    assert form.is_valid() and form.reason == "Outside my language skills: Danish dialect"


def test_flag_alone_needs_a_tag_or_a_comment_and_joins_them():
    assert not FlagForm({}, required=True).is_valid()
    empty = FlagForm({})
    assert empty.is_valid() and empty.comment == ""
    form = FlagForm({"flag_tags": ["ambiguous", "broken text"], "flag_comment": "two readings"}, required=True)
    assert form.is_valid() and form.comment == "ambiguous; broken text; two readings"
