"""An excluded annotator's answers count in no number and are marked in every export (docs/crowd.md,
"Exclusion"; one rule, `Annotation.objects.counted`, annotation/models.py).

Each number read after excluding mallory equals the same number read from a twin task that never had her
answers: the report, the PPI estimates and confidence sequences, the escalation calibration, the model runs'
human consensus, the LLM annotators' examples, SAGE's human row, a retrieval pool's human judgments. The report
page's Counts line states the real number of excluded annotators and answers, its item table marks her answers,
and the answers JSONL and the report CSV carry the exclusion.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from agreement.core.judge_panels import judge_agreement
from agreement.core.report_exports import answer_lines, report_csv
from agreement.core.reports import report_in_process
from agreement.escalation.escalation_loading import alt_test_for_task, escalation_plan, find_judges, human_answers
from agreement.escalation.plan import EscalationProblem
from agreement.escalation.plan_jobs import ask, execute
from agreement.management.commands.sage import human_task_scorer
from agreement.model_runs.execution import load_inputs
from agreement.ppi.document import ppi_document
from agreement.ppi.estimate_jobs import request_ppi, run_ppi
from agreement.ppi.page import judges_of
from agreement.ppi.ppi_loading import PPIInputError, load_numbers
from agreement.retrieval.evaluation_inputs import pool_scores, references
from agreement.retrieval.evaluations import digest
from agreement.retrieval.models import Collection, Subset
from annotation.answer_import import import_annotations
from annotation.core.progress import batch_progress, overview
from annotation.crowd.participants import exclude_annotator
from annotation.llm.models import LLMJudgePanel
from annotation.llm.panels import judge_answers, recompute_mean
from annotation.llm.simulated import run_examples
from annotation.models import Annotation, Annotator, Batch, BatchItem
from hume.lib.import_reader import ImportFailed
from tasks_app.models import Task
from tests.report_builders import annotator_named, build_task, import_answers
from tests.retrieval_helpers import judged_collection

pytestmark = pytest.mark.django_db

N_ITEMS = 60
JUDGE = "judge-llm"
REASON = "answered the opposite of everyone"


def study(name: str, *, with_mallory: bool) -> Task:
    """A classification task (a/b) with gold: a judge answers every item with a confidence; alice labels items
    1-40, bob every second of those, carol every third; mallory (when present) labels items 21-60 with the
    opposite of the truth, 20 of them items nobody else labelled."""
    rng = np.random.default_rng(33)
    truth = rng.choice(["a", "b"], size=N_ITEMS, p=[0.3, 0.7])
    flip = {"a": "b", "b": "a"}
    records = [{"id": str(i + 1), "text": f"text {i + 1}", "label": str(truth[i])} for i in range(N_ITEMS)]
    task = build_task("classification", name, records, labels=["a", "b"])
    judge_right = rng.random(N_ITEMS) < 0.85
    confidence = np.where(judge_right, rng.uniform(0.7, 1.0, N_ITEMS), rng.uniform(0.4, 0.8, N_ITEMS))
    rows: list[dict[str, Any]] = [
        {"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm",
         "value": str(truth[i]) if judge_right[i] else flip[str(truth[i])]} for i in range(N_ITEMS)]
    for i in range(40):
        rows.append({"item": str(i + 1), "annotator": "alice", "value": str(truth[i])})
        if i % 2 == 0:
            rows.append({"item": str(i + 1), "annotator": "bob",
                         "value": str(truth[i]) if i % 8 else flip[str(truth[i])]})
        if i % 3 == 0:
            rows.append({"item": str(i + 1), "annotator": "carol", "value": str(truth[i])})
    if with_mallory:
        rows += [{"item": str(i + 1), "annotator": "mallory", "value": flip[str(truth[i])]} for i in range(20, 60)]
    import_answers(task, rows)
    for item_id, value in zip(task.items.order_by("position").values_list("pk", flat=True), confidence, strict=True):
        Annotation.objects.filter(item_id=item_id, annotator__user__username=JUDGE).update(confidence=float(value))
    return task


@pytest.fixture
def twins() -> tuple[Task, Task]:
    """The study with mallory, who is then excluded, and its twin that never had her answers."""
    with_her, without_her = study("with-mallory", with_mallory=True), study("without-mallory", with_mallory=False)
    assert exclude_annotator(annotator_named("mallory"), REASON) == [with_her.pk]
    return with_her, without_her


def without_task(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("task", "task_id", "computed_at", "computed_in")}


def test_the_report_equals_the_report_of_a_task_without_her_answers(twins) -> None:
    excluded, twin = twins
    doc, _ = report_in_process(excluded)
    expected, _ = report_in_process(twin)
    for key in ("n_items", "n_annotators", "n_answers", "n_skipped", "agreement", "agreement_pairs",
                "agreement_intervals", "human", "annotators", "llm", "disagreement", "excluded", "n_excluded",
                "answers_digest"):
        assert doc[key] == expected[key], key
    assert doc.get("annotator_models") == expected.get("annotator_models")
    assert doc["n_answers"] == 40 + 20 + 14  # alice, bob, carol (people only): mallory's 40 not read
    assert "mallory" not in {a["name"] for a in doc["annotators"]}
    (entry,) = doc["excluded_annotators"]
    assert (entry["name"], entry["reason"], entry["n_answers"]) == ("mallory", REASON, 40)
    assert expected["excluded_annotators"] == []


def test_the_ppi_estimates_and_sequences_equal_those_without_her_answers(twins) -> None:
    excluded, twin = twins
    doc = ppi_document(excluded, JUDGE, target_half_width=0.2)
    expected = ppi_document(twin, JUDGE, target_half_width=0.2)
    assert without_task(doc) == without_task(expected)
    assert doc["n_labelled"] == 40 and doc["n_annotators_scored"] == 3  # items 41-60 only she labelled: unlabelled
    assert doc["sequences"] and all(s["looks"] for s in doc["sequences"])
    numbers, twin_numbers = load_numbers(excluded, JUDGE), load_numbers(twin, JUDGE)
    assert np.array_equal(numbers.label_order, twin_numbers.label_order)
    assert np.array_equal(numbers.human[numbers.labelled], twin_numbers.human[twin_numbers.labelled])


def test_the_escalation_calibration_equals_the_one_without_her_answers(twins) -> None:
    excluded, twin = twins
    external = dict(Task.objects.get(pk=excluded.pk).items.values_list("pk", "external_id"))
    twin_external = dict(twin.items.values_list("pk", "external_id"))
    assert ({external[pk]: sorted(v) for pk, v in human_answers(excluded).items()}
            == {twin_external[pk]: sorted(v) for pk, v in human_answers(twin).items()})
    plan = escalation_plan(excluded, [JUDGE], 0.2, 0.1)
    expected = escalation_plan(twin, [JUDGE], 0.2, 0.1)
    assert without_task(plan.result) == without_task(expected.result)
    # the alternative-annotator test counts the people who count: alice, bob and carol
    tested = alt_test_for_task(excluded, JUDGE, 0.1, min_items=5)
    assert tested == alt_test_for_task(twin, JUDGE, 0.1, min_items=5)
    assert sorted(a.annotator for a in tested.annotators) == ["alice", "bob", "carol"]


def test_the_ppi_panel_says_when_a_stored_estimate_predates_an_exclusion(dave) -> None:
    task, twin = study("ppi-before", with_mallory=True), study("ppi-twin", with_mallory=False)
    client = Client()
    client.force_login(dave)
    notice = "Computed before an exclusion changed whose answers count"
    row = request_ppi(task, JUDGE)
    assert run_ppi(row.pk) == "done"
    assert notice not in client.get(reverse("agreement:ppi_panel", args=[task.pk])).content.decode()
    row.refresh_from_db()
    assert row.document["n_labelled"] == 60  # mallory's items counted while she was not excluded
    exclude_annotator(annotator_named("mallory"), REASON)
    assert notice in client.get(reverse("agreement:ppi_panel", args=[task.pk])).content.decode()
    row = request_ppi(task, JUDGE)
    assert run_ppi(row.pk) == "done"
    assert notice not in client.get(reverse("agreement:ppi_panel", args=[task.pk])).content.decode()
    row.refresh_from_db()
    assert row.document["estimates"] == ppi_document(twin, JUDGE)["estimates"]


def test_the_escalation_page_says_when_a_stored_plan_predates_an_exclusion(dave) -> None:
    task, twin = study("plan-before", with_mallory=True), study("plan-twin", with_mallory=False)
    client = Client()
    client.force_login(dave)
    notice = "Computed before an exclusion changed whose answers count"
    first = ask(task, [JUDGE], 0.2, 0.1)
    assert execute(first.pk) == "done"
    assert notice not in client.get(f"/escalation/{first.pk}/").content.decode()
    exclude_annotator(annotator_named("mallory"), REASON)
    assert notice in client.get(f"/escalation/{first.pk}/").content.decode()
    second = ask(task, [JUDGE], 0.2, 0.1)
    assert execute(second.pk) == "done"
    assert notice not in client.get(f"/escalation/{second.pk}/").content.decode()
    second.refresh_from_db()
    expected = escalation_plan(twin, [JUDGE], 0.2, 0.1)
    assert without_task({k: v for k, v in second.result.items() if k != "escalated_item_ids"}) == \
        without_task(expected.result)


def test_model_runs_examples_sage_and_the_judge_list_leave_her_out(twins) -> None:
    excluded, twin = twins
    _items, _gold, humans = load_inputs(excluded)
    _twin_items, _twin_gold, twin_humans = load_inputs(twin)
    position = dict(excluded.items.values_list("pk", "position"))
    twin_position = dict(twin.items.values_list("pk", "position"))
    assert ({position[pk]: v for pk, v in humans.items()} == {twin_position[pk]: v for pk, v in twin_humans.items()})
    assert len(humans) == 40  # items 41-60 have no human answer that counts
    examples = run_examples(excluded, 4)
    assert examples == run_examples(twin, 4)  # one set per counted person, mallory's never among them
    assert judges_of(excluded) == [JUDGE]


def test_an_excluded_judge_is_refused_with_the_reason(twins) -> None:
    excluded, _ = twins
    exclude_annotator(annotator_named(JUDGE), "hallucinated labels")
    with pytest.raises(PPIInputError, match=r"judge 'judge-llm' is excluded \(hallucinated labels\)"):
        load_numbers(excluded, JUDGE)
    with pytest.raises(EscalationProblem, match=r"'judge-llm': excluded"):
        find_judges(excluded, [JUDGE])
    with pytest.raises(EscalationProblem, match=r"'judge-llm': excluded"):
        alt_test_for_task(excluded, JUDGE, 0.1)
    assert judges_of(excluded) == []


def test_the_answers_jsonl_marks_every_excluded_answer(twins) -> None:
    excluded, _ = twins
    lines = [json.loads(line) for line in answer_lines(excluded)]
    assert len(lines) == N_ITEMS + 40 + 20 + 14 + 40  # every answer is exported, hers included
    hers = [line for line in lines if line["annotator"] == "mallory"]
    assert len(hers) == 40 and all(line["excluded"] is True and line["excluded_reason"] == REASON for line in hers)
    others = [line for line in lines if line["annotator"] != "mallory"]
    assert all(line["excluded"] is False and "excluded_reason" not in line for line in others)


def test_the_exported_answers_move_to_another_instance_with_their_exclusion(twins) -> None:
    """On another instance mallory is a new name: importing the export excludes her there with the same reason,
    so the moved study's report counts what the original's did."""
    excluded, twin = twins
    lines = [json.loads(line) for line in answer_lines(excluded)]
    moved = "".join(json.dumps({**line, "annotator": line["annotator"].replace("mallory", "mallory-elsewhere")})
                    + "\n" for line in lines)
    summary = import_annotations(io.BytesIO(moved.encode()), "moved.jsonl", twin)
    assert (summary.added, summary.unchanged, summary.annotators_excluded) == (40, 60 + 40 + 20 + 14,
                                                                              ["mallory-elsewhere"])
    elsewhere = annotator_named("mallory-elsewhere")
    assert elsewhere.excluded_at is not None and elsewhere.excluded_reason == REASON
    doc, _ = report_in_process(twin)
    original, _ = report_in_process(excluded)
    assert doc["n_answers"] == original["n_answers"] == 74 and doc["human"] == original["human"]
    assert [(e["name"], e["n_answers"]) for e in doc["excluded_annotators"]] == [("mallory-elsewhere", 40)]


def test_an_import_refuses_an_annotator_excluded_on_one_line_and_not_another(twins) -> None:
    _, twin = twins
    lines = [{"item": "1", "annotator": "eve", "value": "a", "annotator_agent": "human", "excluded": True},
             {"item": "2", "annotator": "eve", "value": "b", "annotator_agent": "human"},
             {"item": "3", "annotator": "eve", "value": "b", "annotator_agent": "human", "excluded": "yes"},
             {"item": "4", "annotator": "ivan", "value": "b", "annotator_agent": "human", "excluded_reason": "spam"}]
    with pytest.raises(ImportFailed) as failed:
        import_annotations(io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()), "bad.jsonl",
                           twin)
    assert [str(problem) for problem in failed.value.problems] == [
        'bad.jsonl line 2, field "excluded": annotator \'eve\' is excluded on line 1: every line of one annotator '
        "says the same",
        'bad.jsonl line 3, field "excluded": must be true or false, got \'yes\'',
        'bad.jsonl line 4, field "excluded_reason": only an excluded answer ("excluded": true) carries one']
    assert not Annotator.objects.filter(user__username__in=["eve", "ivan"]).exists()  # nothing was imported


def test_the_report_csv_lists_the_excluded_annotator_and_her_answer_count(twins) -> None:
    excluded, _ = twins
    doc, _ = report_in_process(excluded)
    rows = list(csv.DictReader(io.StringIO(report_csv(doc))))
    (row,) = [r for r in rows if r["section"] == "excluded_annotator"]
    assert (row["scope"], row["annotator"], row["metric"], row["value"], row["note"]) == \
        ("task", "mallory", "n_answers", "40", REASON)
    assert not any(r["annotator"] == "mallory" for r in rows if r["section"] != "excluded_annotator")


def test_the_counts_line_states_the_exclusion_and_the_item_table_marks_her_answers(twins, dave) -> None:
    excluded, _ = twins
    report_in_process(excluded)
    client = Client()
    client.force_login(dave)
    page = client.get(reverse("agreement:detail", kwargs={"task_id": excluded.pk}))
    text = re.sub(r"\s+", " ", page.content.decode())
    counts = text.split('id="counts"')[1].split("</section>")[0]
    assert "3 human annotators" in counts  # alice, bob and carol
    assert '<span id="n-excluded-annotators">1 annotator excluded</span>' in counts
    assert "0 items left out of scoring" in counts
    assert ('<strong>mallory</strong> (<span dir="auto">answered the opposite of everyone</span>; '
            "40 answers left out)") in counts
    shown = [answer for item in page.context["items"] for answer in item["answers"]]
    assert {a["name"] for a in shown if a["excluded"]} == {"mallory"}
    assert not any(a["excluded"] for a in shown if a["name"] != "mallory")
    assert text.count("(excluded: not counted)") == sum(a["excluded"] for a in shown) > 0


def test_retrieval_references_and_the_evaluation_digest_leave_an_excluded_judge_out() -> None:
    judged_collection()
    collection = Collection.objects.get()
    subset = Subset.objects.get(name="en")
    judges, _humans = pool_scores(subset)
    kept = judges["judge-a"]
    before = digest(collection, {})
    exclude_annotator(annotator_named("judge-b"), "scored by text length")
    judges, _humans = pool_scores(subset)
    assert judges == {"judge-a": kept}
    assert sorted(references(subset)) == ["judge:judge-a", "qrels:test"]  # no "judge:judge-b", no "judges:mean"
    assert digest(collection, {}) != before  # a stored evaluation is computed again, without judge-b


def test_sages_human_row_is_the_mean_of_the_people_who_count() -> None:
    records = [{"id": str(i), "sentence1": f"left {i}", "sentence2": f"right {i}", "score": 2.5} for i in (1, 2)]
    task = build_task("sts", "sage-humans", records, scale_min=0, scale_max=5)
    ratings = {"alice": {"1": 4, "2": 1}, "bob": {"1": 3}, "mallory": {"1": 0, "2": 5}}
    import_answers(task, [{"item": item, "annotator": name, "value": value}
                          for name, values in ratings.items() for item, value in values.items()])
    exclude_annotator(annotator_named("mallory"), REASON)
    scorer = human_task_scorer("sage-humans")
    assert scorer.similarity(["left 1", "left 2"], ["right 1", "right 2"]).tolist() == [3.5 / 5, 1 / 5]


def test_a_judge_panels_mean_and_agreement_leave_an_excluded_judge_out() -> None:
    records = [{"id": str(i), "sentence1": f"left {i}", "sentence2": f"right {i}", "score": 2.5} for i in (1, 2, 3)]
    task = build_task("sts", "panel-task", records, scale_min=0, scale_max=5)
    ratings = {"judge-one": [1, 2, 4], "judge-two": [5, 5, 5], "judge-three": [2, 2, 3]}
    import_answers(task, [{"item": str(i + 1), "annotator": name, "annotator_agent": "llm", "value": value}
                          for name, values in ratings.items() for i, value in enumerate(values)])
    panel = LLMJudgePanel.objects.create(task=task, name="three judges")
    panel.judges.set([annotator_named(name) for name in ratings])
    exclude_annotator(annotator_named("judge-two"), "answers 5 to everything")
    judges = {pk for answers in judge_answers(panel).values() for pk in answers}
    assert judges == {annotator_named("judge-one").pk, annotator_named("judge-three").pk}
    assert recompute_mean(panel) == {"items": 3, "items_missing_a_judge": 0}
    mean = Annotation.objects.filter(annotator=panel.mean_annotator).order_by("item__position")
    assert list(mean.values_list("value", flat=True)) == [1.5, 2.0, 3.5]  # judge-one and judge-three only
    agreement = judge_agreement(panel)
    assert agreement["judges"] == ["judge-one", "judge-three"]
    assert [(p["a"], p["b"]) for p in agreement["pairs"]] == [("judge-one", "judge-three")]


def test_batch_progress_counts_toward_k_only_the_answers_that_count() -> None:
    records = [{"id": str(i), "text": f"text {i}", "label": "a"} for i in range(1, 5)]
    task = build_task("classification", "progress-task", records, labels=["a", "b"])
    batch = Batch.objects.create(task=task, name="k2", language=task.language, overlap=2)
    BatchItem.objects.bulk_create([BatchItem(batch=batch, item=item, position=n)
                                   for n, item in enumerate(task.items.order_by("position"), start=1)])
    import_answers(task, [{"item": str(i), "annotator": name, "value": "a"} for name in ("alice", "mallory")
                          for i in range(1, 5)], batch=batch)
    before = batch_progress(batch)
    assert (before.done, before.complete_items, before.percent) == (8, 4, 100)
    exclude_annotator(annotator_named("mallory"), REASON)
    after = batch_progress(batch)
    assert (after.needed, after.done, after.complete_items, after.percent) == (8, 4, 0, 50)
    (line,) = overview([batch])
    assert (line["done"], line["percent"]) == (4, 50)


def test_every_answer_reader_goes_through_the_one_rule() -> None:
    """The modules that read answers for a number query them only through `counted()` (or `marked()` to export),
    so a new reader there cannot forget the exclusion."""
    root = Path(__file__).resolve().parent.parent
    readers = ["agreement/core/loading_queries.py", "agreement/ppi/ppi_loading.py",
               "agreement/escalation/escalation_loading.py", "agreement/retrieval/evaluation_inputs.py",
               "agreement/retrieval/evaluations.py",
               "agreement/management/commands/sage.py", "agreement/model_runs/execution.py",
               "annotation/llm/simulated.py", "agreement/core/report_exports.py", "agreement/ppi/page.py",
               "agreement/results/project.py"]
    for path in readers:
        source = (root / path).read_text()
        unruled = re.findall(r"Annotation\.objects\.(?!counted\(\)|marked\(\))\w+", source)
        assert not unruled, f"{path}: {unruled}"
        assert "Annotation.objects." in source, path
    assert Annotator.objects.filter(excluded_at__isnull=False).count() == 0  # nothing leaked between tests
