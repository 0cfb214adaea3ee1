"""Reports nobody misreads: every metric key has a name in words and a definition (in the registry, on the
page and in docs/metrics.md), the page says how annotators were combined and which subset a value was
computed on, and shows Cohen's κ per pair."""
from __future__ import annotations

import html
import random
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from agreement.core.reports import report_in_process
from agreement.core.scoring import score_task
from measures import metric_names
from tests.conftest import REPO
from tests.hume_paper import RESULTS
from tests.kind_samples import SAMPLES
from tests.report_kind_tasks import KINDS, answer, build_kind_task, gold_of, records

DOCS = REPO / "docs" / "metrics.md"


def pure_inputs(kind: str, annotators: tuple[str, ...] = ("ann1", "ann2")) -> tuple[dict, dict]:
    rng = random.Random(1)
    data = records(kind, rng)
    gold = {i: gold_of(kind, record) for i, record in enumerate(data)}
    answers = {i: {name: answer(kind, gold[i], rng) for name in annotators} for i in gold}
    return answers, gold


def emitted_keys(report: dict) -> set[tuple[str, str]]:
    """(section, key) of every metric name in a report."""
    keys = {("agreement", key) for key in report["agreement"]}
    keys |= {("gold", key) for key in report["human"]["scores"]} | {("gold", report["human"]["main_metric"])}
    keys |= {("gold", key) for person in report["annotators"] for key in person["scores"]}
    keys |= {("ci", report["human"]["ci_method"])}
    return keys


def every_report() -> list[dict]:
    reports = []
    for kind in KINDS:
        answers, gold = pure_inputs(kind)
        axes = ["overall", "coherence"] if kind == "likert" else None
        if kind == "likert":
            answers = {i: {n: {**v, "coherence": v["overall"]} for n, v in votes.items()}
                       for i, votes in answers.items()}
            gold = {i: {**g, "coherence": g["overall"]} for i, g in gold.items()}
        reports.append(score_task(kind, answers, gold, axes=axes, labels=["neg", "neu", "pos"] if kind ==
                                  "classification" else None))
        one, _ = pure_inputs(kind, ("ann1",))
        reports.append(score_task(kind, one, gold))
    answers, gold = pure_inputs("sts")
    reports += [score_task("sts", answers, gold, spearman_variance=v) for v in ("bonett_wright", "fieller")]
    reports.append(score_task("graded_relevance", *pure_inputs("graded_relevance"), k=5))
    return reports


def test_every_metric_key_a_report_can_emit_has_a_label_and_a_definition() -> None:
    keys = set().union(*(emitted_keys(report) for report in every_report()))
    assert ("agreement", "krippendorff_alpha_coherence") in keys and ("gold", "ndcg_at_5") in keys

    missing = sorted((section, key) for section, key in keys if metric_names.lookup(key, section) is None)
    assert missing == []
    assert metric_names.label("fleiss_kappa", "agreement") == "Fleiss' κ"
    assert metric_names.label("krippendorff_alpha", "agreement") == "Krippendorff's α"
    assert metric_names.label("ndcg_at_10") == "nDCG@10" and "top 10" in metric_names.definition("ndcg_at_10")
    assert metric_names.label("mrr_at_10") == "MRR@10"
    assert metric_names.label("krippendorff_alpha_overall", "agreement") == "Krippendorff's α (overall)"
    assert metric_names.label("pearson_mean", "agreement") == "mean pairwise Pearson r"
    assert metric_names.label("pearson_mean", "gold") == "mean Pearson r over axes"
    assert metric_names.label("something_new") == "something_new"  # unknown keys are shown, not dropped


def test_the_glossary_in_the_docs_lists_every_registered_metric() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for _, key, name in metric_names.glossary():
        assert f"`{key}`" in text, key
        assert name.label.replace("{k}", "k") in text, name.label
        assert name.definition.replace("{k}", "k") in text, key
    assert "KAPPA_MIN_SHARED_ITEMS" in text and "default **10**" in text


def visible_text(page: str) -> str:
    """What a reader sees: no tags (and so no attributes), entities decoded."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.fixture
def researcher(dave) -> Client:
    client = Client()
    client.force_login(dave)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_the_page_names_metrics_in_words_and_says_how_annotators_were_combined(kind, researcher) -> None:
    task = build_kind_task(kind)
    doc, _ = report_in_process(task)
    page = researcher.get(reverse("agreement:detail", args=[task.pk])).content.decode()
    text = visible_text(page)

    for section, key in emitted_keys(doc):
        if "_" in key:
            assert re.search(rf"\b{re.escape(key)}\b", text) is None, f"{key} shown as a key"
        name = metric_names.lookup(key, section)
        assert f'title="{html.escape(name.definition)}"' in page, key  # the definition on hover
    for key in doc["agreement"]:
        assert metric_names.label(key, "agreement") in text
    assert "How annotators were combined" in text
    assert f"The human score: {doc['human']['combination']}." in text
    for chart in SAMPLES[kind].report_charts:  # the kind's charts (its samples.py)
        assert f'src="/reports/task/{task.pk}/charts/{chart}.svg"' in page, chart


@pytest.mark.django_db
def test_the_page_states_the_tie_rule_the_subset_and_the_kappa_pairs(researcher) -> None:
    task = build_kind_task("classification")
    doc, _ = report_in_process(task)
    text = " ".join(visible_text(researcher.get(reverse("agreement:detail", args=[task.pk])).content.decode()).split())

    assert "majority vote per item, ties to the lexicographically first label" in text
    assert f"Tie rule: lexicographically first label; {doc['human']['n_tied_items']} tied item" in text
    # ann3 answered 4 of the 12 items: Fleiss' κ is computed on the 8 items with two answers
    assert ("computed on the 8 items with 2 answers each (of 12 answered by two or more annotators, 12 answered)"
            in text)
    assert doc["agreement_notes"]["fleiss_kappa"] in text
    assert "Cohen's κ per annotator pair" in text
    assert "Pairs sharing fewer than 10 items are excluded from the mean" in text
    pairs = doc["agreement_pairs"]["cohen_kappa"]["pairs"]
    assert [(p["a"], p["b"], p["n_shared"], p["excluded"]) for p in pairs] == [
        ("ann1", "ann2", 12, False), ("ann1", "ann3", 4, True), ("ann2", "ann3", 4, True)]
    assert "ann1 ann3 4" in text and "excluded: fewer than 10 shared" in text
    assert "mean over 1 annotator pair sharing 10 or more items; 2 pairs with fewer excluded" in text


def test_the_mteb_agreement_names_read_as_the_same_entries() -> None:
    assert metric_names.label("mean_pairwise_kappa", "agreement") == "mean pairwise Cohen's κ"
    assert metric_names.label("mean_pairwise_ari", "agreement") == "mean pairwise ARI"
    assert metric_names.label("mean_spearman", "agreement") == "mean pairwise Spearman ρ"


@pytest.mark.django_db
def test_the_results_tasks_page_gives_the_agreement_metric_in_words_on_hover(researcher) -> None:
    call_command("import_results", str(RESULTS), stdout=StringIO())
    page = researcher.get(reverse("results:tasks")).content.decode()
    definition = html.escape(metric_names.definition("fleiss_kappa", "agreement"))
    assert f'title="Fleiss&#x27; κ: {definition}">κ = ' in page
    assert f'title="mean pairwise ARI: {html.escape(metric_names.definition("ari_mean", "agreement"))}">ARI = ' in page
