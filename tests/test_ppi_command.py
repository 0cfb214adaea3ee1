"""`python manage.py ppi`: the document a worker would compute, printed as JSON or CSV; refused input exits
with the reason and writes nothing."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.ppi.ppi_loading import load_numbers
from annotation.models import Annotation, Batch
from measures.ppi.task_estimates import estimates_document, overall
from tests.ppi_helpers import JUDGE, rated_likert_study
from tests.report_builders import import_study

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


def test_sixty_labels_without_a_rare_label_never_say_stop(tmp_path) -> None:
    """Issue 33's case end to end: a classification task whose 60 human labels hold no "rare" (its share over the
    pool is 6%). The Gaussian-mixture sequence gave `share:rare` looks of exactly [0, 0] and
    `target_reached_at` 20; the betting sequence keeps every look open and never reaches ±0.03 on 60 labels."""
    rng = np.random.default_rng(6)
    truth = rng.choice(["common", "other", "rare"], size=300, p=[0.64, 0.30, 0.06])
    judge = np.where(rng.random(300) < 0.8, truth, rng.choice(["common", "other", "rare"], size=300))
    records = [{"text": f"text {i}"} for i in range(300)]
    answers = [{"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm", "value": str(judge[i])}
               for i in range(300)]
    without_rare = [i for i in rng.permutation(300) if truth[i] != "rare"][:60]
    answers += [{"item": str(i + 1), "annotator": "alice", "value": str(truth[i])} for i in without_rare]
    import_study(tmp_path, "classification", "ppi-rare", records, answers, labels="common,other,rare")
    assert float(np.mean(truth == "rare")) == pytest.approx(0.06, abs=0.01)

    doc = json.loads(run_ppi("ppi-rare", "--judge", JUDGE, "--target-half-width", "0.03", "--format", "json")[0])
    rare = next(s for s in doc["sequences"] if s["estimand"] == "share:rare")
    assert [look["t"] for look in rare["looks"]] == [20, 30, 40, 50, 60]
    assert all(look["high"] > look["low"] for look in rare["looks"])
    assert all(look["low"] == 0 for look in rare["looks"])  # no "rare" seen: nothing rules a share of 0 out
    assert rare["target_reached_at"] is None
    # the upper bound falls as zeros accumulate, and still covers the pool's share
    assert [round(look["high"], 3) for look in rare["looks"]] == [0.262, 0.159, 0.115, 0.09, 0.074]
    assert rare["looks"][-1]["high"] > float(np.mean(truth == "rare"))
