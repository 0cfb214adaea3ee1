"""A model score from too few items is flagged, shown with a warning and never ranked or named best (issue 28:
MiniLM scored 0.000 accuracy on an 8-item demo task, 5-fold CV with 1–2 items per label, and was underlined as
the best model)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.template.loader import render_to_string

from agreement.model_runs.evaluate import too_few_items
from measures.model_scoring import MIN_CORRELATION_PAIRS
from tests import model_data as data

pytestmark = pytest.mark.django_db


def test_too_few_items_names_the_thin_label_or_the_pair_count() -> None:
    assert too_few_items("classification", ["a"] * 5 + ["b"] * 5) is None
    assert too_few_items("classification", ["a"] * 6 + ["b"] * 2) == (
        "8 items, 2 with the label 'b': 5-fold cross-validation needs at least 5 items of each label")
    assert too_few_items("sts", [1.0] * MIN_CORRELATION_PAIRS) is None
    assert too_few_items("sts", [1.0, 2.0, 3.0, 4.0]) == "a correlation over 4 pair(s): fewer than 5"
    assert too_few_items("likert", [{"fluency": 3}] * 2) == "a correlation over 2 pair(s): fewer than 5"
    assert too_few_items("reranking", [None]) is None  # ranking scores average queries: no such floor here


def test_a_thin_classification_run_is_flagged_shown_and_left_out_of_the_comparison(dave) -> None:
    from agreement.model_runs.rows import rows_context
    from agreement.results.compare import build
    from tests.report_builders import answers_from_columns, build_task, import_answers

    records = data.CLASSIFICATION[:4] + data.CLASSIFICATION[7:11]  # 4 sport, 4 food
    task = build_task("classification", "thin", records, **data.TASK_FIELDS.get("classification", {}))
    import_answers(task, answers_from_columns({"alice": ["sport"] * 4 + ["food"] * 4}))
    task.mteb_task_name = "ThinClassification"
    task.save()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    out = io.StringIO()
    call_command("run_models", task.name, "--models", "minilm", "--wait", stdout=out)
    gold = json.loads(out.getvalue())["models"]["minilm"]["gold"]
    reason = "8 items, 4 with the label 'food': 5-fold cross-validation needs at least 5 items of each label"
    assert gold["too_few_items"] == reason and gold["main_score"] is not None

    html = render_to_string("model_runs/_model_rows.html", {**rows_context(task.pk, dave), "task": task})
    assert f'<span class="badge warn" title="{reason}">⚠ too few items</span>' in html.replace("&#x27;", "'")
    assert "it is left out of the leaderboards" in html

    comparison = build()
    assert not [s for s in comparison.scores if s.name.endswith("(run here)")]
    entry = "sentence-transformers/all-MiniLM-L6-v2 (run here)"  # the shipped model's MTEB name
    assert comparison.warnings == [f"{entry} on thin is left out: too few items ({reason})."]
