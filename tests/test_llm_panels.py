"""Judge panels: several LLM judges on one task, their agreement, and the "mean of judges" annotator."""
from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from django.test import Client
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from agreement.tasks import refresh_judge_panel
from annotation.llm.models import LLMJudgePanel
from annotation.llm.panels import recompute_mean
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotation
from tests.conftest import PASSWORD
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")  # the fake LLM servers listen on 127.0.0.1

# Three judges' graded scores on (item, document) units; item 3 was not answered by the third judge.
SCORES = {
    "judge-a": [{"d1": 7, "d2": 0}, {"d1": 9, "d2": 2}, {"d1": 3, "d2": 1}],
    "judge-b": [{"d1": 8, "d2": 1}, {"d1": 9, "d2": 3}, {"d1": 4, "d2": 0}],
    "judge-c": [{"d1": 6, "d2": 0}, {"d1": 7, "d2": 1}],
}


def graded_panel() -> tuple[LLMJudgePanel, list]:
    task, items, _ = make_task("graded_relevance", 3)
    judges = [make_judge(name, "http://127.0.0.1:9/v1").annotator for name in SCORES]
    for judge in judges:
        for item, value in zip(items, SCORES[judge.name], strict=False):
            Annotation.objects.create(item=item, annotator=judge, value=value, source="llm")
    panel = LLMJudgePanel.objects.create(task=task, name="three judges")
    panel.judges.set(judges)
    return panel, items


def flat(name: str) -> list[float]:
    values = [[v["d1"], v["d2"]] for v in SCORES[name]]
    return [x for pair in values for x in pair] + [np.nan] * (6 - 2 * len(values))


@pytest.mark.django_db
def test_the_mean_of_judges_is_an_llm_annotator_holding_the_per_document_mean() -> None:
    panel, items = graded_panel()
    assert recompute_mean(panel) == {"items": 2, "items_missing_a_judge": 1}
    panel.refresh_from_db()
    mean = panel.mean_annotator
    assert mean.agent == "llm" and not mean.user.has_usable_password()
    assert mean.name == f"mean-of-three-judges-{panel.pk}"
    values = dict(Annotation.objects.filter(annotator=mean).values_list("item_id", "value"))
    assert values == {items[0].pk: {"d1": 7.0, "d2": 0.3333}, items[1].pk: {"d1": 8.3333, "d2": 2.0}}
    assert set(Annotation.objects.filter(annotator=mean).values_list("source", flat=True)) == {"llm-mean"}


@pytest.mark.django_db
def test_the_mean_is_recomputed_on_demand_from_the_judges_current_answers() -> None:
    panel, items = graded_panel()
    recompute_mean(panel)
    judge_c = panel.judges.get(user__username="judge-c")
    Annotation.objects.create(item=items[2], annotator=judge_c, value={"d1": 5, "d2": 2}, source="llm")
    Annotation.objects.filter(annotator__user__username="judge-a", item=items[0]).update(value={"d1": 10, "d2": 0})
    assert recompute_mean(panel) == {"items": 3, "items_missing_a_judge": 0}
    values = dict(Annotation.objects.filter(annotator=panel.mean_annotator).values_list("item_id", "value"))
    assert values[items[0].pk] == {"d1": 8.0, "d2": 0.3333} and values[items[2].pk] == {"d1": 4.0, "d2": 1.0}
    assert Annotation.objects.filter(annotator=panel.mean_annotator).count() == 3


@pytest.mark.django_db
def test_judge_agreement_matches_scipy_and_krippendorff_on_the_same_units() -> None:
    panel, _ = graded_panel()
    refresh_judge_panel(panel.pk)
    panel.refresh_from_db()
    result = panel.agreement
    names = list(SCORES)
    columns = {name: np.array(flat(name)) for name in names}
    pairs = []
    for a, b in itertools.combinations(names, 2):
        both = ~np.isnan(columns[a]) & ~np.isnan(columns[b])
        pairs.append((stats.pearsonr(columns[a][both], columns[b][both]).statistic,
                      stats.spearmanr(columns[a][both], columns[b][both]).statistic))
    assert result["units"] == 6 and result["judges"] == names
    assert result["overall"]["pearson_mean"]["value"] == pytest.approx(np.mean([p for p, _ in pairs]))
    assert result["overall"]["spearman_mean"]["value"] == pytest.approx(np.mean([s for _, s in pairs]))
    alpha = krippendorff.alpha(reliability_data=np.array([columns[n] for n in names]), level_of_measurement="interval")
    assert result["overall"]["alpha_interval"]["value"] == pytest.approx(alpha)
    assert [(p["a"], p["b"], p["units"]) for p in result["pairs"]] == [
        ("judge-a", "judge-b", 6), ("judge-a", "judge-c", 4), ("judge-b", "judge-c", 4)]
    assert result["pairs"][0]["pearson"]["value"] == pytest.approx(pairs[0][0])


@pytest.mark.django_db
def test_label_judges_are_compared_with_fleiss_kappa() -> None:
    task, items, _ = make_task("classification", 4)
    labels = {"judge-a": ["positive", "negative", "negative", "positive"],
              "judge-b": ["positive", "negative", "positive", "positive"],
              "judge-c": ["negative", "negative", "negative", "positive"]}
    judges = [make_judge(name, "http://127.0.0.1:9/v1").annotator for name in labels]
    for judge in judges:
        for item, label in zip(items, labels[judge.name], strict=True):
            Annotation.objects.create(item=item, annotator=judge, value=label, source="llm")
    panel = LLMJudgePanel.objects.create(task=task, name="labels")
    panel.judges.set(judges)
    refresh_judge_panel(panel.pk)
    panel.refresh_from_db()
    table, _ = aggregate_raters(np.array([[labels[n][i] == "positive" for n in labels] for i in range(4)], dtype=int))
    assert panel.agreement["overall"]["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table))
    assert panel.mean_annotator is None  # a mean of labels is not defined


@pytest.mark.django_db
def test_three_judges_answer_through_the_server_and_the_panel_page_shows_their_agreement(
        carol, monkeypatch, django_capture_on_commit_callbacks) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-panel-1")
    task, _items, _ = make_task("graded_relevance", 4)
    offsets = {"model-judge-a": 0, "model-judge-b": 1, "model-judge-c": -1}

    def answer(seen) -> dict[str, int]:
        i = int(seen.marker[2:4])
        return {"d1": 5 + i + offsets[seen.body["model"]], "d2": i % 3}

    with ChatServer(answer_for=answer) as server:
        judges = [make_judge(name, server.base_url) for name in ("judge-a", "judge-b", "judge-c")]
        client = Client()
        client.login(username="carol", password=PASSWORD)
        response = client.post("/llm/panels/new/", {"task": task.pk, "name": "graded",
                                                    "judges": [j.annotator_id for j in judges]})
        panel = LLMJudgePanel.objects.get()
        assert response["Location"] == f"/llm/panels/{panel.pk}/"
        with django_capture_on_commit_callbacks() as enqueued:
            client.post(f"/llm/panels/{panel.pk}/runs/", {"task": task.pk})
        assert len(enqueued) == 3
        for judge in judges:
            execute_run(create_run(judge.annotator, task=task).pk)
    assert server.count == 12
    with django_capture_on_commit_callbacks() as enqueued:
        client.post(f"/llm/panels/{panel.pk}/refresh/")
    assert len(enqueued) == 1
    refresh_judge_panel(panel.pk)
    page = client.get(f"/llm/panels/{panel.pk}/").content.decode()
    assert "pearson_mean" in page and "1.000" in page  # judges differ by a constant offset: r = 1
    panel.refresh_from_db()
    mean = dict(Annotation.objects.filter(annotator=panel.mean_annotator).values_list("item__external_id", "value"))
    assert mean["[m01]"] == {"d1": 6.0, "d2": 1.0}


@pytest.mark.django_db
def test_the_api_queues_a_panel_refresh_for_admins_only(carol, dave, alice, django_capture_on_commit_callbacks) -> None:
    """POST /api/v1/llm/panels/<id>/refresh/ sends one refresh to the worker after commit (admins); researchers
    read panels but may not refresh them; annotators are refused the whole endpoint, whatever the id."""
    panel, _ = graded_panel()
    url = f"/api/v1/llm/panels/{panel.pk}/refresh/"
    admin, researcher, annotator = Client(), Client(), Client()
    admin.force_login(carol)
    researcher.force_login(dave)
    annotator.force_login(alice.user)

    with django_capture_on_commit_callbacks() as refused:
        assert researcher.post(url).status_code == 403
        missing = "/api/v1/llm/panels/999999/refresh/"
        assert annotator.post(url).status_code == annotator.post(missing).status_code == 403
    with django_capture_on_commit_callbacks() as enqueued:
        response = admin.post(url)

    assert response.status_code == 202 and response.json() == {"detail": "recomputing"}
    assert (len(refused), len(enqueued)) == (0, 1)
    refresh_judge_panel(panel.pk)  # what the worker runs for that message
    shown = admin.get(f"/api/v1/llm/panels/{panel.pk}/").json()
    assert shown["agreement"]["units"] == 6 and shown["mean_annotator"]
