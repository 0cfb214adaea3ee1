"""The annotator models quality page (/reports/task/<id>/annotator-models/): per model, each annotator's skill
(and MACE's spam score), lowest first, read from the stored report; researchers only; no inline style or script."""
from __future__ import annotations

import csv
import io
import re

import pytest
from django.test import Client

from tests.report_builders import build_task, cli_report, import_answers
from tests.test_report_aggregation import spam_crowd

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_of(user, task) -> tuple[int, str]:
    response = client_for(user).get(f"/reports/task/{task.pk}/annotator-models/")
    return response.status_code, response.content.decode()


def test_a_researcher_sees_each_models_skills_with_the_spammers_first(dave, settings) -> None:
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 1000
    task = spam_crowd("spam-page")
    cli_report(task)
    status, html = page_of(dave, task)
    assert status == 200
    for method in ("majority", "dawid-skene", "one-coin", "glad", "mace"):
        assert f'id="model-{method}"' in html
    ds = html[html.index('id="model-dawid-skene"'):html.index('id="model-one-coin"')]
    assert "Consensus accuracy against gold: <strong>1.000</strong>" in ds
    names = re.findall(r'data-annotator="([^"]+)"', ds)
    assert set(names[:3]) == {"spam0", "spam1", "spam2"} and set(names[3:]) == {"ann1", "ann2"}  # lowest first
    mace = html[html.index('id="model-mace"'):]
    assert "spam = 1 − competence" in mace
    # MACE's competence, lowest first. (On this crowd MACE trusts the three identical "a" answers: three
    # annotators who always agree look competent to a model without gold; Dawid-Skene does not fall for it.)
    skills = [float(v) for v in re.findall(r'data-annotator="[^"]+"><td dir="auto">[^<]+</td><td class="num">([0-9.]+)',
                                           mace)]
    assert len(skills) == 5 and skills == sorted(skills)
    assert "style=" not in html and "<script>" not in html.split("</head>")[1]  # strict CSP: nothing inline


def test_the_constant_answer_spammers_mace_trusts_are_flagged_for_straight_lining(dave, settings) -> None:
    """MACE's blind spot (docs/reports.md, "Annotator models"): three annotators who always answer "a" agree with
    each other, so MACE rates them competent; their answer spread (20 answers, all "a": share 1.0, entropy 0)
    flags them next to MACE's competence. The careful two give gold: 10 "a" and 10 "b", share 0.5, 1 bit."""
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 1000
    task = spam_crowd("spam-straight")
    cli_report(task)
    status, html = page_of(dave, task)
    assert status == 200
    mace = html[html.index('id="model-mace"'):html.index('id="answer-spread"')]
    rows = dict(re.findall(r'data-annotator="([^"]+)">.*?<td class="straightlining">(.*?)</td>', mace, flags=re.S))
    assert rows == {"spam0": "<strong>flagged</strong>", "spam1": "<strong>flagged</strong>",
                    "spam2": "<strong>flagged</strong>", "ann1": "", "ann2": ""}
    spread = html[html.index('id="answer-spread"'):]
    cells = {name: [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
             for name, row in re.findall(r'data-spread="([^"]+)">(.*?)</tr>', spread, flags=re.S)}
    assert cells["spam0"] == ["spam0", "20", "a", "1.000", "0.800", "0.000", "flagged"]  # pool: 80 "a" of 100
    assert cells["ann1"] == ["ann1", "20", "a", "0.500", "0.800", "1.000", ""]


def test_annotators_and_anonymous_users_never_see_it(alice, settings) -> None:
    task = spam_crowd("spam-private")
    assert page_of(alice.user, task)[0] == 403
    assert Client().get(f"/reports/task/{task.pk}/annotator-models/").status_code == 302  # to the login


def test_a_kind_without_labels_says_so(dave) -> None:
    task = build_task("sts", "sts-page", [{"sentence1": "a", "sentence2": "b", "score": 3.0}])
    import_answers(task, [{"item": "1", "annotator": "x", "value": 2.0}, {"item": "1", "annotator": "y", "value": 3.0}])
    cli_report(task)
    status, html = page_of(dave, task)
    assert status == 200
    assert "has no labels to model" in html
    assert "need labels, as the classification (one per item), " in html  # the kinds that aggregate labels,
    assert "reranking (one per candidate)" in html and "sts (" not in html  # from the registry


def test_a_report_over_the_cap_says_why_and_how_to_fit_one_model(dave, settings) -> None:
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 10
    task = spam_crowd("spam-over-cap")
    cli_report(task)
    html = page_of(dave, task)[1]
    assert "not computed: 100 answers, more than ANNOTATOR_MODELS_MAX_ANSWERS (10)" in html
    assert "--aggregation mace" in html


def test_the_report_page_links_to_it_and_names_a_model_aggregation(dave) -> None:
    task = spam_crowd("spam-link")
    cli_report(task, "--aggregation", "glad")
    html = client_for(dave).get(f"/reports/task/{task.pk}/").content.decode()
    assert f'href="/reports/task/{task.pk}/annotator-models/"' in html
    assert "aggregated by <strong>glad</strong>" in html
    assert "glad consensus per item (crowd-kit 1.4.2)" in html  # "How annotators were combined"


def test_the_report_csv_gives_each_annotators_answer_spread(dave, settings) -> None:
    """The quality page's answer spread in the report CSV (docs/reports.md, "Annotator models"): on the spam crowd
    each spammer gave "a" 20 times (share 1, 0 bits, flagged); the careful two gave gold, 10 "a" and 10 "b"
    (share 0.5 with "a" the smaller label as text, 1 bit). The pool gave "a" 3·20 + 2·10 = 80 times of 100."""
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 1000
    task = spam_crowd("spam-csv")
    cli_report(task)
    status, html = page_of(dave, task)
    assert status == 200 and f'id="spread-csv" href="/reports/task/{task.pk}/report.csv"' in html
    text = client_for(dave).get(f"/reports/task/{task.pk}/report.csv").content.decode()
    rows = [row for row in csv.DictReader(io.StringIO(text)) if row["section"] == "answer_spread"]
    values = {(row["annotator"], row["metric"]): row["value"] for row in rows}
    assert {name for name, _ in values} == {"ann1", "ann2", "spam0", "spam1", "spam2"}
    for spammer in ("spam0", "spam1", "spam2"):
        assert [values[(spammer, metric)] for metric in ("n_answers", "modal_share", "entropy_bits", "pool_share",
                                                        "straightlining")] == ["20", "1.0", "0.0", "0.8", "1"]
    assert [float(values[("ann1", metric)]) for metric in ("n_answers", "modal_share", "entropy_bits", "pool_share",
                                                          "straightlining")] == [20, 0.5, 1.0, 0.8, 0]
    notes = {row["annotator"]: row["note"] for row in rows if row["metric"] == "modal_share"}
    assert notes == {name: "modal label a" for name in ("ann1", "ann2", "spam0", "spam1", "spam2")}
    assert all(row["scope"] == "task" for row in rows)
