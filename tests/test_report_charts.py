"""The report's charts: their data (hand-computed), the SVG each URL serves, and who may see them."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from agreement.core.reports import report_in_process
from agreement.core.scoring import score_task
from agreement.report_charts import available, chart_svg
from kinds.charts import MAX_POINTS
from measures import metrics as m
from tests.kind_samples import SampleTable
from tests.report_kind_tasks import build_kind_task
from tests.test_scoring_edge_cases import TASKS as EDGE_TASKS

# tests/test_scoring_classification.py's task: majority votes joy, joy (tie), sad, anger; gold joy sad sad anger
ANSWERS = {
    1: {"alice": "joy", "bob": "joy", "gpt": "joy"},
    2: {"alice": "sad", "bob": "joy", "gpt": "sad"},
    3: {"alice": "sad", "bob": "sad", "gpt": "joy"},
    4: {"alice": "anger", "bob": None, "gpt": "anger"},
}
GOLD = {1: "joy", 2: "sad", 3: "sad", 4: "anger"}


def test_label_charts_hold_the_confusion_matrix_the_label_counts_and_each_annotators_ci() -> None:
    charts = score_task("classification", ANSWERS, GOLD, annotator_agents={"gpt": "llm"}, with_charts=True)["charts"]

    confusion = charts["confusion"]
    assert confusion["labels"] == ["anger", "joy", "sad"]
    assert confusion["matrix"] == [[1, 0, 0], [0, 1, 0], [0, 1, 1]]  # rows gold, columns majority vote
    counts = {row["name"]: row["counts"] for row in charts["distribution"]["rows"]}
    assert counts == {"alice": [1, 1, 2], "bob": [0, 2, 1], "gpt": [1, 2, 1], "gold": [1, 1, 2]}
    rows = {row["name"]: row for row in charts["annotator_scores"]["rows"]}
    assert charts["annotator_scores"]["metric"] == "accuracy"
    assert (rows["bob"]["score"], rows["bob"]["n"]) == (pytest.approx(2 / 3), 3)
    assert (rows["bob"]["ci_low"], rows["bob"]["ci_high"]) == pytest.approx(m.wilson_interval(2, 3))
    assert (rows["alice"]["ci_low"], rows["alice"]["ci_high"]) == pytest.approx(m.wilson_interval(4, 4))
    assert rows["gpt"]["agent"] == "llm"


def test_rating_charts_plot_ratings_against_gold_and_the_pair_sharing_most_items() -> None:
    answers = {i: {"a": float(i), "b": float(i) + 0.5, "c": float(i) if i < 3 else None} for i in range(8)}
    gold = {i: float(i) for i in range(8)}
    charts = score_task("sts", answers, gold, scale=(0, 10), with_charts=True)["charts"]

    scatter = charts["scatter_gold"]
    assert scatter["names"] == ["a", "b", "c"] and scatter["n_points"] == 8 + 8 + 3
    assert [0.0, 0.5, 1] in scatter["points"]  # gold 0, b's rating 0.5
    pair = charts["scatter_pair"]
    assert (pair["a"], pair["b"], pair["n_points"]) == ("a", "b", 8)
    rows = {row["name"]: row for row in charts["annotator_scores"]["rows"]}
    assert rows["a"]["score"] == pytest.approx(1.0) and rows["a"]["ci_method"] == "fisher_z"
    assert rows["c"]["n"] == 3 and rows["c"]["ci_low"] is None  # Fisher z needs more than 3 items


def test_a_large_scatter_is_a_seeded_sample_with_the_total_given() -> None:
    answers = {i: {"a": float(i % 50), "b": float((i * 7) % 50)} for i in range(MAX_POINTS)}
    gold = {i: float(i % 50) for i in range(MAX_POINTS)}
    first = score_task("sts", answers, gold, scale=(0, 50), with_charts=True)["charts"]["scatter_gold"]
    again = score_task("sts", answers, gold, scale=(0, 50), with_charts=True)["charts"]["scatter_gold"]
    assert first["n_points"] == 2 * MAX_POINTS and len(first["points"]) == MAX_POINTS
    assert first["points"] == again["points"]


def test_clustering_charts_count_clusters_per_set() -> None:
    answers = {"s1": {"a": [0, 0, 1, 1], "b": [0, 1, 2, 3]}, "s2": {"a": [5, 5, 5, 6]}}
    gold = {"s1": ["x", "x", "y", "y"], "s2": ["x", "x", "x", "y"]}
    charts = score_task("clustering", answers, gold, with_charts=True)["charts"]
    assert charts["distribution"]["labels"] == ["2 clusters", "4 clusters"]
    assert {r["name"]: r["counts"] for r in charts["distribution"]["rows"]} == {
        "a": [2, 0], "b": [0, 1], "gold": [2, 0]}
    rows = {row["name"]: row for row in charts["annotator_scores"]["rows"]}
    assert (rows["a"]["n"], rows["a"]["ci_method"]) == (8, "wilson (N = texts)")


CHARTS_OF = SampleTable("report_charts")  # {kind: the charts its report shows} (each kind's samples.py)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(CHARTS_OF))
def test_each_chart_url_serves_an_svg_with_marks_and_no_inline_css(kind, dave) -> None:
    task = build_kind_task(kind)
    report_in_process(task)
    client = Client()
    client.force_login(dave)

    for name in CHARTS_OF[kind]:
        response = client.get(reverse("agreement:chart", args=[task.pk, name]))
        assert response.status_code == 200, name
        assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
        svg = response.content.decode()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert "style=" not in svg and "<style" not in svg  # the CSP allows no inline style
        marks = len(re.findall(r'<g id="patch_', svg)) + len(re.findall(r"<use ", svg))
        assert marks >= 4, (name, marks)
    assert client.get(reverse("agreement:chart", args=[task.pk, "nope"])).status_code == 404


@pytest.mark.django_db
def test_annotators_never_get_a_chart(alice, dave) -> None:
    task = build_kind_task("classification")
    report_in_process(task)
    client = Client()
    client.force_login(alice.user)
    response = client.get(reverse("agreement:chart", args=[task.pk, "confusion"]))
    assert response.status_code == 403
    assert b"<svg" not in response.content


@pytest.mark.parametrize("kind", sorted(EDGE_TASKS))
def test_charts_draw_for_one_annotator_and_nothing_is_drawn_of_all_skipped_ratings(kind) -> None:
    answers, gold = EDGE_TASKS[kind]
    alone = score_task(kind, {i: {"alice": v["alice"]} for i, v in answers.items()}, gold, with_charts=True)
    for chart in available(alone):
        assert "<svg" in chart_svg(alone, chart.name)
    skipped = score_task(kind, {i: {n: None for n in v} for i, v in answers.items()}, gold, with_charts=True)
    assert "scatter_gold" not in skipped["charts"] and "scatter_pair" not in skipped["charts"]
    assert [row["score"] for row in skipped["charts"]["annotator_scores"]["rows"]] == [None, None]


@pytest.mark.parametrize("kind", ["clustering", "pairwise"])
def test_a_task_with_no_answers_lists_no_empty_chart_and_draws_the_distribution_without_a_legend(kind) -> None:
    """The demo's clustering and pairwise tasks before anyone answers: gold's row counts nothing, so the chart
    is not offered (the crawl of issue 28 found its URL answering 500: matplotlib refuses a 0-column legend)."""
    doc = {"charts": {"distribution": {"rows": [{"name": "gold", "counts": []}], "labels": []},
                      "confusion": {"labels": [], "matrix": [], "rows": "gold", "columns": "majority vote"}}}
    assert [chart.name for chart in available(doc)] == []
    assert "<svg" in chart_svg(doc, "distribution")  # drawn anyway if asked for directly: empty axes, no error
    answered = {"charts": {"distribution": {"rows": [{"name": "gold", "counts": [2, 1]}], "labels": ["a", "b"]}}}
    assert [chart.name for chart in available(answered)] == ["distribution"]
