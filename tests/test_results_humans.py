"""This project's humans and LLM annotators beside imported models: mapping, scores, CI, Spearman (HUME §4.4).

Three English classification tasks are mapped to HUME's MTEB tasks; alice (and erin on one task) answer
them, and an LLM annotator answers the same items. An imported model scores 0.9 everywhere. The comparison
reads stored reports only: the fixture stores them with the worker's own code (reports.report_in_process).
"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from agreement.core.reports import report_in_process
from agreement.models import Report
from agreement.results.compare import build, leaderboard_rows, llm_correlations, per_task_rows
from agreement.results.entries import PROJECT_HUMANS
from annotation.models import Annotation, Batch
from tasks_app.models import Item, ItemGold, Task
from tests.conftest import make_annotator

MAPPED = ("HUMEEmotionClassification", "HUMEToxicConversationsClassification",
          "HUMETweetSentimentExtractionClassification")


def make_task(name: str, mteb: str, gold: list[str], language: str = "eng-Latn", subset: str = "default") -> Task:
    task = Task.objects.create(name=name, kind="classification", language=language, labels=["a", "b"],
                               mteb_task_name=mteb, mteb_subset=subset)
    for position, value in enumerate(gold):
        item = Item.objects.create(task=task, uid=f"{name}-{position}", external_id=f"i{position}",
                                   position=position, payload={"text": f"text {position}"})
        ItemGold.objects.create(item=item, value=value)
    return task


def answer(task: Task, annotator, labels: str, batch: Batch | None = None) -> None:
    for item, label in zip(task.items.order_by("position"), labels, strict=True):
        Annotation.objects.create(item=item, annotator=annotator, value=label, batch=batch)


def store_reports() -> None:
    """What the workers do after answers come in: compute and store each task's report."""
    for task in Task.objects.all():
        report_in_process(task)


def import_model(tmp_path: Path, score: float = 0.9) -> None:
    for task in (*MAPPED, "HUMEMultilingualSentimentClassification"):
        folder = tmp_path / "acme__embedder" / "r1"
        folder.mkdir(parents=True, exist_ok=True)
        subsets = [{"main_score": score, "hf_subset": "default", "languages": ["eng-Latn"]}]
        if task == "HUMEMultilingualSentimentClassification":
            subsets = [{"main_score": score, "hf_subset": code, "languages": [lang]}
                       for code, lang in (("eng", "eng-Latn"), ("ara", "ara-Arab"))]
        (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "scores": {"test": subsets}}))
    call_command("import_results", str(tmp_path), stdout=StringIO())


@pytest.fixture
def study(db, alice, tmp_path):
    """alice: 5/5, 4/5 and 3/5 correct; the LLM: 4/5, 3/5 and 1/5 — the same order of difficulty."""
    erin = make_annotator("erin", {"eng-Latn": "native"})
    llm = make_annotator("gpt-test", {"eng-Latn": "native"}, agent="llm")
    tasks = [make_task(f"task {n}", mteb, ["a"] * 5) for n, mteb in enumerate(MAPPED)]
    for task, human, machine in zip(tasks, ("aaaaa", "aaaab", "aaabb"), ("aaaab", "aaabb", "abbbb"), strict=True):
        answer(task, alice, human)
        answer(task, llm, machine)
    answer(tasks[0], erin, "aaabb")  # erin disagrees on two items: kappa is defined, majority stays "a"
    import_model(tmp_path)
    store_reports()
    return tasks


def test_mapped_tasks_bring_this_projects_humans_and_llms_into_the_leaderboard(study):
    rows = {row["name"]: row for row in leaderboard_rows(build(), ["eng-Latn"])}
    humans, llm, model = rows[PROJECT_HUMANS], rows["gpt-test"], rows["acme/embedder"]
    assert (humans["agent"], humans["origin"], humans["n_subsets"]) == ("human", "this project", 3)
    assert humans["columns"]["Classification/eng-Latn"] == pytest.approx((1.0 + 0.8 + 0.6) / 3)
    assert (llm["agent"], llm["n_subsets"]) == ("llm", 3)
    assert llm["columns"]["Classification/eng-Latn"] == pytest.approx((0.8 + 0.6 + 0.2) / 3)
    # the model also has MultilingualSentiment: by default all three are ranked over the 3 subsets they share
    # (3 rows × 3 subsets beats the model alone on 4): model 0.9, humans (1.0 + 0.8 + 0.6) / 3 = 0.8, LLM 0.533
    assert (model["n_subsets"], model["n_subsets_outside"]) == (3, 1)
    assert [(row["rank"], row["overall"]) for row in (model, humans, llm)] == [
        (1, pytest.approx(0.9)), (2, pytest.approx(0.8)), (3, pytest.approx(1.6 / 3))]
    assert humans["rank_among_models"] == 2
    # requiring all 4 subsets (the old rule): humans and LLM miss one, so no overall score or rank
    strict = {row["name"]: row for row in leaderboard_rows(build(), ["eng-Latn"], rank_over="all")}
    assert strict["acme/embedder"]["n_subsets"] == 4 and strict["acme/embedder"]["rank"] == 1
    assert strict[PROJECT_HUMANS]["overall"] is None and strict[PROJECT_HUMANS]["rank_among_models"] is None


def test_the_human_score_ci_and_agreement_follow_the_hume_protocol(study):
    rows = {row["task"]: row for row in per_task_rows(build(), PROJECT_HUMANS, ["eng-Latn"])}
    emotion = rows["HUMEEmotionClassification"]
    assert emotion["human"] == 1.0  # majority vote of alice and erin; ties go to the first label, "a"
    assert emotion["ci"] == [pytest.approx(0.5655, abs=1e-4), 1.0]  # Wilson, n = 5
    assert (emotion["ci_method"], emotion["n_items"], emotion["n_annotators"]) == ("wilson", 5, 2)
    assert emotion["agreement_metric"] == "fleiss_kappa" and emotion["agreement"] is not None
    assert emotion["best_model"]["name"] == "acme/embedder" and emotion["best_model"]["outside_ci"] is False
    toxic = rows["HUMEToxicConversationsClassification"]
    assert toxic["human"] == 0.8 and toxic["agreement_label"] == "n/a"  # one annotator: agreement n/a
    assert toxic["best_model"]["pct_of_human"] == pytest.approx(112.5)


def test_humans_and_the_llm_find_the_same_tasks_hard(study):
    (row,) = llm_correlations(build(), PROJECT_HUMANS, ["eng-Latn"])
    assert (row["name"], row["n"], row["rho"]) == ("gpt-test", 3, pytest.approx(1.0))


def test_an_llms_answers_never_count_toward_the_human_score(study, alice):
    # the LLM is wrong where alice is right on task 0: the human score stays 1.0 (HUME §3.6)
    rows = {row["task"]: row for row in per_task_rows(build(), PROJECT_HUMANS, ["eng-Latn"])}
    emotion = rows["HUMEEmotionClassification"]
    assert (emotion["human"], emotion["n_annotators"]) == (1.0, 2)


def test_a_batch_in_another_language_is_its_own_subset(study, bob):
    task = make_task("sentiment", "HUMEMultilingualSentimentClassification", ["a", "a", "b", "b"], subset="eng")
    arabic = Batch.objects.create(task=task, name="arabic", language="ara-Arab")
    answer(task, bob, "aabb", batch=arabic)
    store_reports()
    rows = {(row["task"], row["language"]): row
            for row in per_task_rows(build(), PROJECT_HUMANS, ["eng-Latn", "ara-Arab"])}
    arabic_row = rows[("HUMEMultilingualSentimentClassification", "ara-Arab")]
    assert arabic_row["human"] == 1.0 and arabic_row["best_model"]["score"] == 0.9
    assert ("HUMEMultilingualSentimentClassification", "eng-Latn") not in rows  # no English answers yet


def test_the_pages_default_to_this_projects_humans_and_show_the_llm(study, dave):
    client = Client()
    client.force_login(dave)
    response = client.get("/results/?lang=eng-Latn")
    assert response.context["selection"].human == PROJECT_HUMANS
    assert response.context["selection"].humans == [PROJECT_HUMANS]
    assert [row["name"] for row in response.context["llm_correlations"]] == ["gpt-test"]
    html = response.content.decode()
    assert 'data-name="gpt-test"' in html and "agent-llm" in html
    detail = client.get("/results/tasks/HUMEEmotionClassification/?lang=eng-Latn")
    (mapping,) = detail.context["mappings"]["project"]
    assert (mapping["task"], mapping["mteb_subset"], mapping["n_annotators"]) == ("task 0", "default", 2)
    assert [cell["name"] for cell in detail.context["rows"][0]["models"]] == ["acme/embedder", "gpt-test"]


def test_admins_edit_the_mapping_and_researchers_only_read_it(study, carol, dave):
    task = study[0]
    admin = Client()
    admin.force_login(carol)
    response = admin.post(f"/results/mapping/{task.pk}/", {"mteb_task_name": "HUMESTS12", "mteb_subset": "xx"})
    assert response.status_code == 302
    task.refresh_from_db()
    assert (task.mteb_task_name, task.mteb_subset) == ("HUMESTS12", "xx")
    admin.post(f"/results/mapping/{study[1].pk}/", {"mteb_task_name": MAPPED[1], "mteb_subset": "xx"})
    detail = admin.get(f"/results/tasks/{MAPPED[1]}/")
    (mapping,) = detail.context["mappings"]["project"]
    assert mapping["subset_known"] is False  # the imported results have only the "default" subset
    assert "unknown subset" in detail.content.decode()
    reader = Client()
    reader.force_login(dave)
    assert reader.post(f"/results/mapping/{task.pk}/", {"mteb_task_name": ""}).status_code == 403
    page = reader.get("/results/mapping/")
    assert page.status_code == 200 and 'name="mteb_task_name"' not in page.content.decode()
    assert "HUMESTS12" in page.content.decode()
    task.refresh_from_db()
    assert task.mteb_task_name == "HUMESTS12"


def test_two_tasks_on_the_same_subset_keep_the_first_and_say_so(study):
    twin = make_task("twin", "HUMEEmotionClassification", ["a"])
    answer(twin, Annotation.objects.first().annotator, "b")
    store_reports()
    comparison = build()
    assert comparison.warnings == [
        "twin also maps to HUMEEmotionClassification (eng-Latn); only task 0 counts."]


def test_the_agreement_engines_stored_report_is_what_the_comparison_reads(study):
    task = study[1]
    stored = Report.objects.get(task=task).result
    stored["by_language"][0]["human"]["main_score"] = 0.42  # marks the stored document as the one read
    Report.objects.filter(task=task).update(result=stored)
    comparison = build()
    rows = {row["task"]: row for row in per_task_rows(comparison, PROJECT_HUMANS, ["eng-Latn"])}
    assert rows["HUMEToxicConversationsClassification"]["human"] == 0.42
    assert {row["origin"] for row in comparison.mappings} == {"stored report"}


def test_a_task_without_a_stored_report_is_pending_and_never_scored_while_building(study, bob):
    task = make_task("late", "HUMEMultilingualSentimentClassification", ["a", "b"], subset="eng")
    answer(task, bob, "ab")
    comparison = build()
    (pending,) = comparison.pending
    assert (pending.task, pending.status, pending.in_progress) == ("late", None, True)
    assert [row["origin"] for row in comparison.mappings if row["task"] == "late"] == [
        "no stored report yet: being computed"]
    assert not Report.objects.filter(task=task).exists()  # building reads; only a page queues the report
    assert "HUMEMultilingualSentimentClassification" not in {score.task for score in comparison.scores
                                                              if score.name == PROJECT_HUMANS}


def test_an_mteb_task_name_that_cannot_be_an_address_leaves_the_mapping_page_working(study, dave):
    """Issue 23, item 6: a name reaching a URL must not make the page a 500 for every reader."""
    Task.objects.filter(pk=study[0].pk).update(mteb_task_name="a/b")
    reader = Client()
    reader.force_login(dave)
    page = reader.get("/results/mapping/")
    assert page.status_code == 200
    assert "<td>a/b</td>" in page.content.decode()  # shown, not linked
