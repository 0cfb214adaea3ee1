"""`python manage.py ppi`: the document a worker would compute, printed as JSON or CSV; refused input exits
with the reason and writes nothing."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.ppi.ppi_loading import load_numbers
from agreement.ppi.task_estimates import estimates_document, overall
from annotation.models import Annotation, Batch
from tests.ppi_helpers import JUDGE, rated_likert_study

pytestmark = pytest.mark.django_db


def run_ppi(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("ppi", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_json_prints_the_estimates_the_library_computes() -> None:
    task, _ = rated_likert_study("ppi-cli", 90, list(range(0, 90, 3)), seed=5, systems=["x", "y", "z"] * 30)
    out, err = run_ppi("ppi-cli", "--judge", JUDGE, "--alpha", "0.1")
    doc = json.loads(out)
    expected = estimates_document(load_numbers(task, JUDGE), alpha=0.1)
    assert doc["estimates"] == expected["estimates"] and doc["differences"] == expected["differences"]
    assert (doc["task"], doc["judge"], doc["kind"], doc["confidence"]) == ("ppi-cli", JUDGE, "likert", 0.9)
    assert doc["computed_in"] == "cli" and doc["n_labelled"] == 30 and doc["n_unlabelled"] == 60
    assert len(doc["differences"]) == 3  # x−y, x−z, y−z
    row = overall(doc, "rating:overall")
    assert f"your 30 labels are worth {row['n_effective']:.0f}" in err
    assert "plan" not in doc
    (sequence,) = doc["sequences"]
    assert [look["t"] for look in sequence["looks"]] == [20, 30]  # every 10th label, and the last
    last = sequence["looks"][-1]
    assert last["half_width"] > row["half_width"]  # anytime-valid: wider than the fixed-n interval at n = 30
    assert last["low"] < row["estimate"] < last["high"]


def test_csv_has_a_row_per_estimate_difference_and_plan() -> None:
    task, _ = rated_likert_study("ppi-csv", 60, list(range(0, 60, 2)), seed=6, systems=["=cmd", "b"] * 30)
    out, _ = run_ppi(str(task.pk), "--judge", JUDGE, "--format", "csv", "--target-half-width", "0.37")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["section"] for r in rows] == ["estimate"] * 3 + ["difference", "sequence", "plan"]
    assert rows[1]["group"] == "'=cmd"  # a system name cannot run as a spreadsheet formula
    doc = json.loads(run_ppi(str(task.pk), "--judge", JUDGE, "--target-half-width", "0.37")[0])
    assert float(rows[0]["estimate"]) == pytest.approx(overall(doc, "rating:overall")["estimate"])
    assert doc["plan"]["n_more"] > 0 and rows[-1]["n_more"] == str(doc["plan"]["n_more"])


def test_refused_input_exits_with_the_reason_and_writes_nothing() -> None:
    rated_likert_study("ppi-bad", 10, [0, 1])
    before = (Annotation.objects.count(), Batch.objects.count())
    with pytest.raises(CommandError, match="'alice' is a person"):
        run_ppi("ppi-bad", "--judge", "alice")
    Annotation.objects.filter(annotator__user__username=JUDGE, item__external_id="3").delete()
    with pytest.raises(CommandError, match=r"answered 9 of the 10 items"):
        run_ppi("ppi-bad", "--judge", JUDGE)
    with pytest.raises(CommandError, match="no task named 'nope'"):
        run_ppi("nope", "--judge", JUDGE)
    with pytest.raises(CommandError, match="alpha"):
        run_ppi("ppi-bad", "--judge", JUDGE, "--alpha", "1.5")
    assert (Annotation.objects.count(), Batch.objects.count()) == (before[0] - 1, before[1])
