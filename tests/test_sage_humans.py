"""Humans on SAGE: the study's perturbed pairs as an STS task, the people's ratings as a row of Table 1."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.datasets import load_study
from agreement.sage.humans import human_scorer, sts_items
from agreement.sage.study import run_study
from annotation.models import Annotation
from measures.sage import categories as cat
from measures.sage import perturb
from tasks_app.models import Item

STUDY = Path(__file__).parent / "sage_study"
SUPERFICIAL = {v.name for v in perturb.SUPERFICIAL}


def rating(item_id: str, sensitivity: float) -> float:
    """Superficial 5, summary 3, semantic 1 (the order A.3 asks for); every sensitivity pair `sensitivity`."""
    category, _, _, variant = item_id.split("/")
    if category == "sensitivity":
        return sensitivity
    return 5.0 if variant in SUPERFICIAL else 3.0 if variant == "summary" else 1.0


def expected_sensitivity(normalised: float) -> float:
    # A.4 per kind: 1 − mean |observed − (1 − p/(1+p))| over the 9 variants; Table 1 averages the two kinds.
    kinds = (perturb.SENSITIVITY_INSERTION, perturb.SENSITIVITY_REMOVAL)
    return sum(1 - sum(abs(normalised - (1 - v.proportion / (1 + v.proportion))) for v in k) / 9 for k in kinds) / 2


def test_sts_items_hold_every_robustness_and_sensitivity_pair_once():
    items = sts_items(load_study(STUDY), seed=0)
    ids = [i["id"] for i in items]
    pairs = {(i["sentence1"], i["sentence2"]) for i in items}
    assert len(ids) == len(set(ids)) == len(pairs)
    # 3 documents × (6 perturbations + summary) + 5 documents × 18, less any shuffle that left a text as it was.
    assert 105 <= len(items) <= 3 * 7 + 5 * 18
    assert "robustness/news/vaccine/summary" in ids and "sensitivity/essays/e1/removal_90_at_1.0" in ids
    assert all("score" not in i and i["sentence1"] != i["sentence2"] for i in items)


def test_the_human_row_scores_robustness_and_sensitivity_from_the_ratings():
    study = load_study(STUDY)
    items = sts_items(study, seed=0)
    humans = human_scorer(items, {i["id"]: rating(i["id"], 4.0) for i in items}, (0.0, 5.0))
    table = run_study(study, [BASELINE_METRICS["jaccard"], humans], seed=0)
    row = next(r for r in table["rows"] if r["group"] == "human")
    assert row["scores"]["robustness"] == pytest.approx(1.0)
    assert row["scores"]["sensitivity"] == pytest.approx(expected_sensitivity(0.8))
    assert row["scores"]["clustering"] is None and row["scores"]["retrieval"] is None
    assert row["overall"] == pytest.approx((1.0 + expected_sensitivity(0.8)) / 2)
    assert [r["group"] for r in table["rows"]] == ["classical", "human"]


def test_unrated_pairs_leave_the_category_empty_and_say_why():
    study = load_study(STUDY)
    items = sts_items(study, seed=0)
    rated = {i["id"]: rating(i["id"], 4.0) for i in items if i["id"].startswith("robustness/")}
    table = run_study(study, [human_scorer(items, rated, (0.0, 5.0))], seed=0)
    assert table["rows"][0]["scores"]["sensitivity"] is None
    assert "have no human rating yet" in table["subtables"]["sensitivity"]["Humans"]["not_rated"]
    assert table["rows"][0]["overall"] == pytest.approx(1.0)


@pytest.mark.django_db
def test_people_rate_the_pairs_in_an_sts_task_and_appear_in_table_1(tmp_path, alice, bob):
    pairs = tmp_path / "sage_pairs.jsonl"
    call_command("sage", "tasks", "--datasets", str(STUDY), "--output", str(pairs), stdout=StringIO())
    call_command("import_task", str(pairs), "--name", "SAGE pairs", "--kind", "sts", "--language", "eng-Latn",
                 stdout=StringIO())
    items = Item.objects.filter(task__name="SAGE pairs")
    assert items.count() == len(pairs.read_text().splitlines())
    for item in items:  # alice rates sensitivity pairs 4, bob 5: a mean of 4.5, 0.9 on 0-1
        Annotation.objects.create(item=item, annotator=alice, value=rating(item.external_id, 4.0))
        Annotation.objects.create(item=item, annotator=bob, value=rating(item.external_id, 5.0))
    out = StringIO()
    call_command("sage", "run", "--datasets", str(STUDY), "--metrics", "jaccard", "--human-task", "SAGE pairs",
                 "--format", "json", stdout=out)
    humans = next(r for r in json.loads(out.getvalue())["rows"] if r["group"] == "human")
    assert humans["scores"]["robustness"] == pytest.approx(1.0)
    assert humans["scores"]["sensitivity"] == pytest.approx(expected_sensitivity(0.9))
    assert set(cat.CATEGORIES) - {c for c, v in humans["scores"].items() if v is not None} == {
        "clustering", "human_preference", "retrieval"}
