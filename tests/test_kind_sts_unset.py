"""Issue 28: the STS answer is not the slider's starting point. Unanswered, the partial shows "not set" and an
empty score (the form refuses it); with an answer stored, the score is shown and "not set" is hidden."""
from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from annotation.core.forms import answer_form_for
from tests.loop_data import RECORDS, add_items, make_task

pytestmark = pytest.mark.django_db


def rendered(form, item) -> str:
    return render_to_string(form.template, {"form": form, "item": item, "task": form.task})


def test_an_unanswered_sts_item_says_not_set_and_an_empty_score_is_refused() -> None:
    task = make_task("sts")
    item = add_items(task, RECORDS["sts"][:1])[0]
    html = rendered(answer_form_for(task, item.payload), item)
    assert '<span class="muted" data-unset>not set</span>' in html
    assert 'name="score" id="id_score"' in html and 'required value=""' in html
    refused = answer_form_for(task, item.payload, {"score": ""})
    assert refused.errors["score"] == ["Move the slider or type a score."]


def test_a_stored_sts_answer_is_shown_and_not_set_is_hidden() -> None:
    task = make_task("sts")
    item = add_items(task, RECORDS["sts"][:1])[0]
    html = rendered(answer_form_for(task, item.payload, answer=2.5), item)
    assert '<span class="muted" data-unset hidden>not set</span>' in html
    assert 'required value="2.5"' in html
