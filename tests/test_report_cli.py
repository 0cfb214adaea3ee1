"""`python manage.py report TASK [--format json|csv]`: documented keys, CSV that spreadsheets cannot run."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from tests.report_builders import answers_from_columns, build_task, cli_report, import_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def task():
    # the same four answers three times: twelve shared items, enough for Cohen's κ (minimum 10); κ is unchanged
    task = build_task("classification", "=cmd|' /C calc'!A0", [{"text": f"t{i}", "label": "a"} for i in range(12)],
                      labels=["a", "b"])
    import_answers(task, answers_from_columns({"+ann": ["a", "a", "b", "a"] * 3, "@ann": ["a", "b", "b", "a"] * 3}))
    return task


def test_the_json_has_the_documented_keys(task) -> None:
    doc = cli_report(task)

    assert {"task", "kind", "language", "n_items", "n_annotators", "agreement", "human", "annotators",
            "flags"} <= set(doc)
    assert set(doc["agreement"]) == {"fleiss_kappa", "krippendorff_alpha", "cohen_kappa_mean", "percent_agreement",
                                    "gwet_ac1"}
    assert {"main_metric", "main_score", "ci_low", "ci_high", "scores"} <= set(doc["human"])
    assert {"name", "agent", "n_answers", "scores"} <= set(doc["annotators"][0])
    assert set(doc["flags"]) >= {"low_agreement", "message"}
    assert "disagreement" not in doc and "disagreement" in cli_report(task, "--items")


def test_the_csv_defuses_formula_cells_and_keeps_numbers(task) -> None:
    out = io.StringIO()
    call_command("report", task.name, "--format", "csv", stdout=out, stderr=io.StringIO())
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))

    assert {row["task"] for row in rows} == {"'=cmd|' /C calc'!A0"}
    assert {row["annotator"] for row in rows if row["section"] == "annotator"} == {"'+ann", "'@ann"}
    kappa = next(row for row in rows if row["metric"] == "cohen_kappa_mean")
    assert float(kappa["value"]) == pytest.approx(0.5)


def test_an_unknown_task_is_a_clear_error() -> None:
    with pytest.raises(CommandError, match="no task named 'nope'"):
        call_command("report", "nope")
