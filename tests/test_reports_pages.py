"""The report pages, downloads and API: researchers read everything (gold included), annotators nothing."""
from __future__ import annotations

import csv
import io
import json
from datetime import datetime

import pytest
from django.test import Client
from django.urls import reverse

from agreement.core.reports import report_in_process
from agreement.models import Report
from annotation.models import Batch
from tests.report_builders import answers_from_columns, build_task, import_answers

pytestmark = pytest.mark.django_db

ARABIC = "هذا النص باللغة العربية"
HOSTILE = '<script>alert("x")</script>'


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def task():
    """A classification task with a hostile text, an Arabic text, a comment, a skip and an LLM annotator."""
    records = [{"id": "t1", "text": HOSTILE, "label": "pos"}, {"id": "t2", "text": ARABIC, "label": "neg"},
               {"id": "t3", "text": "plain", "label": "pos"}, {"id": "t4", "text": "more", "label": "neg"}]
    task = build_task("classification", "Sentiment-ar", records, labels=["neg", "pos"], language="ara-Arab")
    batch = Batch.objects.create(task=task, name='=HYPERLINK("http://evil")', language="ara-Arab", overlap=2)
    humans = {"reader1": ["pos", "pos", "pos", "neg"], "reader2": ["neg", "pos", "pos", "neg"]}
    import_answers(task, answers_from_columns(humans, ["t1", "t2", "t3", "t4"]), batch=batch)
    import_answers(task, [{"item": "t1", "annotator": "reader3", "skipped": True, "skip_reason": "unclear",
                           "flag_comment": "the text is code, not a review"}], batch=batch)
    import_answers(task, answers_from_columns({"llm-judge": ["neg", "neg", "neg", "neg"]}, ["t1", "t2", "t3", "t4"],
                                              agent="llm"))
    report_in_process(task)
    return task


def test_a_researcher_sees_every_task_with_status_and_headline_numbers(dave, task) -> None:
    page = client_for(dave).get(reverse("agreement:list"))

    assert page.status_code == 200
    text = page.content.decode()
    assert "Sentiment-ar" in text and "done" in text
    assert "accuracy</abbr> 0.500" in text  # majority vote (t1 ties → "neg"): t3 and t4 right, t1 and t2 wrong
    assert "Fleiss&#x27; κ</abbr>" in text and "fleiss_kappa" not in text  # the metric in words


@pytest.mark.parametrize("name", ["list", "detail", "status", "export_csv", "export_json", "export_answers"])
def test_an_annotator_is_refused_every_report_page(alice, task, name) -> None:
    url = reverse(f"agreement:{name}", kwargs={} if name == "list" else {"task_id": task.pk})

    response = client_for(alice.user).get(url, HTTP_HX_REQUEST="true")

    assert response.status_code == 403
    main = response.content.split(b"<main>")[-1]  # the app's layout (its logout form posts) aside
    assert b"pos" not in main  # nothing of the gold leaks into the refusal


def test_an_annotator_cannot_queue_a_report(alice, task) -> None:
    response = client_for(alice.user).post(reverse("agreement:recompute", kwargs={"task_id": task.pk}))

    assert response.status_code == 403
    assert Report.objects.get(task=task).status == Report.Status.DONE


def test_an_anonymous_visitor_is_sent_to_log_in(client, task) -> None:
    response = client.get(reverse("agreement:detail", kwargs={"task_id": task.pk}))

    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_report_page_shows_agreement_bands_human_ci_and_llm_annotators_apart(dave, task) -> None:
    text = client_for(dave).get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()
    doc = Report.objects.get(task=task).result

    assert doc["agreement"]["fleiss_kappa"] == pytest.approx(0.4666666, abs=1e-6)
    assert 'band band-moderate">moderate' in text
    low, high = doc["human"]["ci_low"], doc["human"]["ci_high"]
    assert f"95% CI {low:.3f}–{high:.3f}, <abbr" in text and ">Wilson interval</abbr>)" in text
    humans, llms = text.split('id="llm-annotators"')
    assert "reader1" in humans and "llm-judge" not in humans.split('id="annotators"')[1]
    assert "llm-judge" in llms and "never counted in the human agreement" in llms
    assert "1 skipped" in text and "1 flag on 1 item ·" in text  # issue 28: was "1 flags on 1 items"


def test_the_report_page_states_how_annotators_were_combined_and_the_tie_rule(dave, task) -> None:
    text = client_for(dave).get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()
    human = Report.objects.get(task=task).result["human"]

    # t1: reader1 pos, reader2 neg → a tie, broken to "neg" (lexicographically first); gold is pos
    assert (human["n_tied_items"], human["tied_share"]) == (1, 0.25)
    assert "The human score: majority vote per item, ties to the lexicographically first label." in text
    assert "N = 4 items." in text
    assert (f"Tie rule: lexicographically first label; 1 tied item (0.250 of scored); with ties broken at random "
            f"(seed 0): {human['main_score_random_ties']:.3f}.") in text


def test_the_item_view_escapes_text_sets_its_direction_and_shows_gold_and_comments(dave, task) -> None:
    text = client_for(dave).get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()

    assert HOSTILE not in text
    assert '<div class="text-box" dir="auto">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</div>' in text
    assert f'<div class="text-box" dir="auto">{ARABIC}</div>' in text
    assert "the text is code, not a review" in text and "(unclear)" in text
    assert "Gold: <code" in text


def test_items_sort_by_disagreement_with_gold_in_an_htmx_fragment(dave, task) -> None:
    url = reverse("agreement:detail", kwargs={"task_id": task.pk})

    response = client_for(dave).get(url, {"sort": "gold", "fragment": "items"}, HTTP_HX_REQUEST="true")

    text = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert text.lstrip().startswith('<div id="disagreement">') and "<html" not in text
    assert "<strong>with gold</strong>" in text
    # t2: both humans answered "pos" against gold "neg" (1.0 off gold); t1: one of two (0.5)
    order = [chunk.split("</span>")[0] for chunk in text.split('Item <span dir="auto">')[1:]]
    assert order == ["t2", "t1", "t3", "t4"]


def test_items_sort_by_disagreement_among_annotators_by_default(dave, task) -> None:
    text = client_for(dave).get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()

    order = [chunk.split("</span>")[0] for chunk in text.split('Item <span dir="auto">')[1:]]
    assert order[0] == "t1"  # the only item the two humans split on


def test_the_status_fragment_polls_while_queued_and_asks_for_a_reload_when_done(dave, task) -> None:
    client = client_for(dave)
    url = reverse("agreement:status", kwargs={"task_id": task.pk})
    Report.objects.filter(task=task).update(status=Report.Status.QUEUED)

    queued = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    Report.objects.filter(task=task).update(status=Report.Status.DONE)
    done = client.get(url, {"was": "queued"}, HTTP_HX_REQUEST="true")

    assert 'hx-trigger="every 1s"' in queued and "Queued" in queued
    assert 'hx-trigger="every 1s"' not in done.content.decode()
    assert done["HX-Refresh"] == "true"


def test_a_failed_report_shows_its_error_on_the_page(dave, task) -> None:
    Report.objects.filter(task=task).update(status=Report.Status.FAILED, error="ValueError: broken gold")

    text = client_for(dave).get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()

    assert 'role="alert">The last run failed: ValueError: broken gold' in text


def test_the_csv_export_defuses_formulas_and_keeps_numbers(dave, task) -> None:
    response = client_for(dave).get(reverse("agreement:export_csv", kwargs={"task_id": task.pk}))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))

    assert response["Content-Disposition"] == 'attachment; filename="report-Sentiment-ar.csv"'
    groups = {row["group"] for row in rows if row["scope"] == "batch"}
    assert groups == {"'=HYPERLINK(\"http://evil\")"}
    kappa = next(r for r in rows if r["scope"] == "task" and r["metric"] == "fleiss_kappa")
    assert float(kappa["value"]) == pytest.approx(0.4666666, abs=1e-6) and kappa["band"] == "moderate"
    assert not any(cell.startswith(("=", "+", "@")) for row in rows for cell in row.values())


def test_the_json_export_is_the_stored_report(dave, task) -> None:
    response = client_for(dave).get(reverse("agreement:export_json", kwargs={"task_id": task.pk}))

    assert json.loads(response.content) == Report.objects.get(task=task).result


def test_raw_answers_export_in_the_annotation_import_format(dave, task) -> None:
    response = client_for(dave).get(reverse("agreement:export_answers", kwargs={"task_id": task.pk}))
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]

    assert len(lines) == 4 + 4 + 1 + 4
    times = [datetime.fromisoformat(line.pop("submitted_at")) for line in lines]  # each answer's own time
    assert all(when.tzinfo is not None for when in times)
    assert lines[0] == {"item": "t1", "annotator": "llm-judge", "annotator_agent": "llm", "value": "neg",
                        "skipped": False, "skip_reason": "", "flag_comment": "", "time_spent_ms": None,
                        "excluded": False}
    skip = next(line for line in lines if line["skipped"])
    assert skip == {"item": "t1", "annotator": "reader3", "annotator_agent": "human", "value": None, "skipped": True,
                    "skip_reason": "unclear", "flag_comment": "the text is code, not a review", "time_spent_ms": None,
                    "excluded": False}


def test_the_api_gives_researchers_the_report_and_refuses_annotators(dave, alice, task) -> None:
    url = reverse("api-report-detail", kwargs={"task_id": task.pk})

    mine = client_for(dave).get(url).json()
    theirs = client_for(alice.user).get(url)

    assert mine["state"]["status"] == "done" and mine["report"]["task"] == "Sentiment-ar"
    assert mine["report"]["human"]["main_metric"] == "accuracy"
    assert theirs.status_code == 403 and "report" not in theirs.json()
    assert client_for(alice.user).get(reverse("api-report-list")).status_code == 403
    assert [row["task"] for row in client_for(dave).get(reverse("api-report-list")).json()] == ["Sentiment-ar"]


def test_answers_imported_after_the_report_are_announced_on_the_page(dave, task) -> None:
    url = reverse("agreement:detail", kwargs={"task_id": task.pk})
    assert 'id="stale"' not in client_for(dave).get(url).content.decode()

    import_answers(task, [{"item": "t2", "annotator": "reader4", "value": "neg"}])  # bulk: no signal fires

    text = client_for(dave).get(url).content.decode()
    assert "The task now has 14 answers; this report read 13." in text


def test_the_report_page_recomputes_with_the_aggregation_chosen_as_the_command_does(dave, task) -> None:
    """Issue 35, item 7: the page had no aggregation choice although `report --aggregation` has it."""
    from agreement.core.reports import run_report
    from agreement.core.scoring import aggregated_kinds

    client = client_for(dave)
    page = client.get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()
    assert '<select name="aggregation" id="report-aggregation">' in page
    assert '<option value="majority" selected>majority vote (HUME)</option>' in page
    assert '<option value="dawid-skene">Dawid-Skene</option>' in page and '<option value="mace">MACE</option>' in page

    response = client.post(reverse("agreement:recompute", kwargs={"task_id": task.pk}), {"aggregation": "dawid-skene"})
    assert response.status_code == 302
    assert Report.objects.filter(task=task).values_list("aggregation", "status").get() == ("dawid-skene", "queued")
    assert run_report(task.pk, claimed_by="test", computed_in="test") == "computed"
    report = Report.objects.get(task=task)
    cli, _ = report_in_process(task, "dawid-skene")
    assert report.result["aggregation"] == "dawid-skene" == cli["aggregation"]
    assert report.result["human"] == cli["human"]
    page = client.get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()
    assert '<option value="dawid-skene" selected>Dawid-Skene</option>' in page
    assert "aggregated by <strong>dawid-skene</strong>" in page

    refused = client.post(reverse("agreement:recompute", kwargs={"task_id": task.pk}), {"aggregation": "dawid"},
                          follow=True).content.decode()
    assert "Nothing was queued: unknown aggregation &#x27;dawid&#x27;; expected one of: majority, dawid" in refused
    assert Report.objects.filter(task=task).values_list("aggregation", "status").get() == ("dawid-skene", "done")
    assert "sts" not in aggregated_kinds()


def test_a_kind_without_labels_offers_no_aggregation_and_refuses_one(dave) -> None:
    records = [{"id": "s1", "sentence1": "a", "sentence2": "b", "score": 1.0},
               {"id": "s2", "sentence1": "c", "sentence2": "d", "score": 4.0}]
    task = build_task("sts", "STS-agg", records)
    import_answers(task, answers_from_columns({"r1": [1.0, 4.0], "r2": [2.0, 4.5]}, ["s1", "s2"]))
    report_in_process(task)
    client = client_for(dave)
    page = client.get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()
    assert 'name="aggregation"' not in page and "Recompute now" in page
    refused = client.post(reverse("agreement:recompute", kwargs={"task_id": task.pk}), {"aggregation": "glad"},
                          follow=True).content.decode()
    assert "Nothing was queued: aggregation &#x27;glad&#x27; needs labels" in refused
    assert Report.objects.get(task=task).aggregation == "majority"
