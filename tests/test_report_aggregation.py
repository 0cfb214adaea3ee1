"""`report TASK --aggregation X`: the humans scored "as aggregated by" an annotator model, end to end.

The crowd: 20 items with gold alternating a/b; ann1 and ann2 always give the gold label, three spammers always
say "a". The majority vote is therefore "a" everywhere (accuracy 10/20 = 0.5); Dawid-Skene learns that the
spammers' answer carries no information and follows ann1 and ann2 (accuracy 20/20 = 1.0). Worked out by hand
here, and the numbers are what crowd-kit 1.4.2 gives on the same answers (tests/test_annotator_models.py
checks our wrapper against crowd-kit itself).
"""
from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from agreement.core.reports import request_report
from agreement.models import Report
from tests.report_builders import build_task, cli_report, import_answers, wait_for_report

GOLD = ["a" if i % 2 else "b" for i in range(1, 21)]


def spam_crowd(name: str = "spam-crowd"):
    task = build_task("classification", name, [{"text": f"t{i}", "label": g} for i, g in enumerate(GOLD, 1)],
                      labels=["a", "b"])
    rows = []
    for i, gold in enumerate(GOLD, 1):
        rows += [{"item": str(i), "annotator": who, "value": gold} for who in ("ann1", "ann2")]
        rows += [{"item": str(i), "annotator": f"spam{k}", "value": "a"} for k in range(3)]
    import_answers(task, rows)
    return task


@pytest.mark.django_db
def test_dawid_skene_aggregation_scores_the_humans_as_aggregated_and_says_so() -> None:
    task = spam_crowd()
    majority = cli_report(task)
    assert majority["aggregation"] == "majority"
    assert majority["human"]["main_score"] == pytest.approx(0.5)  # "a" everywhere: right on the 10 a-items

    ds = cli_report(task, "--aggregation", "dawid-skene")
    assert ds["aggregation"] == "dawid-skene"
    assert ds["human"]["main_score"] == pytest.approx(1.0)
    assert ds["human"]["aggregation"] == "dawid-skene"
    assert ds["human"]["combination"] == "dawid-skene consensus per item (crowd-kit 1.4.2)"
    assert ds["human"]["n_items_scored"] == 20
    assert ds["inputs_digest"] != majority["inputs_digest"]  # the aggregation is part of the report's key
    assert Report.objects.get(task=task).result["aggregation"] == "dawid-skene"
    # agreement does not depend on how the humans are combined
    assert ds["agreement"] == majority["agreement"]

    again = cli_report(task)  # the default again: a different key, so computed afresh, majority
    assert again["aggregation"] == "majority" and again["human"]["main_score"] == pytest.approx(0.5)
    assert "computed" in again["_cli_said"]


@pytest.mark.django_db
def test_reranking_aggregated_by_dawid_skene_scores_the_consensus_judgments() -> None:
    # 6 queries × 4 candidates, c1 and c3 relevant; ann1 and ann2 judge as gold, three spammers mark everything
    # relevant. Dawid-Skene's consensus per candidate is gold, so its judgments rank c1, c3 first: MAP 1.0
    # over N = 6 queries; the default (HUME: mean over the five annotators' MAP) is lower: a spammer's
    # all-relevant judgments tie every candidate, and scikit-learn's AP of a tie is the share relevant, 2/4.
    gold = {"c1": 1, "c2": 0, "c3": 1, "c4": 0}
    records = [{"query": f"q{q}", "candidates": [{"id": c, "text": f"{c} of q{q}", "relevant": r}
                                                 for c, r in gold.items()]} for q in range(1, 7)]
    task = build_task("reranking", "rerank-ds", records)
    rows = []
    for q in range(1, 7):
        rows += [{"item": str(q), "annotator": who, "value": dict(gold)} for who in ("ann1", "ann2")]
        rows += [{"item": str(q), "annotator": f"spam{k}", "value": dict.fromkeys(gold, 1)} for k in range(3)]
    import_answers(task, rows)

    default = cli_report(task)["human"]
    ds = cli_report(task, "--aggregation", "dawid-skene")["human"]

    assert default["main_score"] == pytest.approx((2 * 1.0 + 3 * 0.5) / 5)
    assert ds["main_score"] == pytest.approx(1.0)
    assert (ds["n_items_scored"], ds["n"], ds["n_unit"]) == (6, 6, "queries")
    assert ds["ci_method"] == "wilson (consensus, N = queries)"
    assert ds["combination"].startswith("dawid-skene consensus per candidate (crowd-kit 1.4.2)")


@pytest.mark.django_db
def test_the_csv_export_names_the_aggregation_of_the_human_row() -> None:
    task = spam_crowd("spam-csv")
    out = io.StringIO()
    call_command("report", task.name, "--format", "csv", "--aggregation", "mace", stdout=out, stderr=io.StringIO())
    rows = [r for r in csv.DictReader(io.StringIO(out.getvalue())) if r["scope"] == "task"]
    main = next(r for r in rows if r["section"] == "human" and r["metric"] == "main_score")
    assert "mace consensus per item (crowd-kit 1.4.2)" in main["note"]
    ac1 = [r["metric"] for r in rows if r["section"] == "agreement_interval"]
    assert ac1 == ["gwet_ac1.standard_error", "gwet_ac1.ci_low", "gwet_ac1.ci_high"]


@pytest.mark.django_db
def test_an_unknown_aggregation_is_refused_and_changes_nothing() -> None:
    task = spam_crowd("spam-bad-name")
    with pytest.raises(CommandError, match="unknown aggregation 'dawid'; expected one of: majority, dawid-skene, "
                                           "one-coin, glad, mace; nothing was computed"):
        call_command("report", task.name, "--aggregation", "dawid", stdout=io.StringIO(), stderr=io.StringIO())
    assert not Report.objects.filter(task=task).exists()


@pytest.mark.django_db
def test_a_kind_without_labels_gets_a_clear_message_and_nothing_changes() -> None:
    task = build_task("sts", "sts-no-labels", [{"sentence1": "a", "sentence2": "b", "score": 3.0}])
    import_answers(task, [{"item": "1", "annotator": "alice", "value": 2.0}])
    with pytest.raises(CommandError, match="aggregation 'glad' needs labels .kinds: classification, pairwise, "
                                           "reranking.; a sts task's human is combined as HUME does"):
        call_command("report", task.name, "--aggregation", "glad", stdout=io.StringIO(), stderr=io.StringIO())
    assert not Report.objects.filter(task=task).exists()


@pytest.mark.django_db
def test_the_report_lists_every_annotator_model_with_skills_and_spam(settings) -> None:
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 1000
    task = spam_crowd("spam-models")
    block = cli_report(task)["annotator_models"]
    assert block["library"] == "crowd-kit 1.4.2" and block["n_answers"] == 100
    assert set(block["models"]) == {"majority", "dawid-skene", "one-coin", "glad", "mace"}
    assert block["models"]["dawid-skene"]["consensus_accuracy"] == pytest.approx(1.0)
    assert block["models"]["majority"]["consensus_accuracy"] == pytest.approx(0.5)
    mace = {a["name"]: a for a in block["models"]["mace"]["annotators"]}
    assert set(mace) == {"ann1", "ann2", "spam0", "spam1", "spam2"}
    assert all(a["spam"] == pytest.approx(1 - a["skill"]) for a in mace.values())
    ds = {a["name"]: a for a in block["models"]["dawid-skene"]["annotators"]}
    # a spammer always saying "a" is right exactly on the true a's: its accuracy is the fitted prior of "a"
    # (near the true 0.5), far below the two reliable annotators'
    assert ds["ann1"]["skill"] > 0.9 > 0.6 > ds["spam0"]["skill"] > 0.4
    assert [row for row in ds["spam0"]["confusion"]] == [pytest.approx([1.0, 0.0], abs=1e-3)] * 2  # "a" whatever


@pytest.mark.django_db
def test_over_the_answer_cap_the_block_says_why_it_is_empty(settings) -> None:
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 50
    block = cli_report(spam_crowd("spam-cap"))["annotator_models"]
    assert block["models"] == {}
    assert block["reason"] == "not computed: 100 answers, more than ANNOTATOR_MODELS_MAX_ANSWERS (50)"


@pytest.mark.worker
def test_a_real_worker_computes_the_aggregated_report(start_worker) -> None:
    start_worker()
    task = spam_crowd("spam-worker")
    request_report(task.pk, aggregation="dawid-skene")
    report = wait_for_report(task)
    assert report.status == Report.Status.DONE, report.error
    assert report.computed_in.startswith("worker")
    assert report.result["aggregation"] == "dawid-skene"
    assert report.result["human"]["main_score"] == pytest.approx(1.0)
    doc = cli_report(task, "--aggregation", "dawid-skene")
    assert "stored" in doc["_cli_said"]  # the CLI found the worker's report by the same key
