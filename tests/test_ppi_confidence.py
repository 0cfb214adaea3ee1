"""Confidence-driven sampling (measures/ppi/active.py `confidence_probabilities`, planner.active_labels_needed,
`ppi_batch --by-confidence`, the page's option): the error model by hand, the estimate against ppi-python 0.2.3,
the planner at no more draws, seeded studies with their figures (tests/ppi_confidence_study.py; the long
version is bench/ppi_confidence.py), and the command and page end to end on PostgreSQL.

Source: "Can Unconfident LLM Annotations Be Used for Confident Conclusions?" (Gligorić, Zrnic, Lee, Candès &
Jurafsky, arXiv:2408.15204); ppi-python has no active-sampling estimator, so the comparison is with its
`ppi_mean_ci` on the weighted values, where the two coincide (measures/ppi/estimates.py `active_estimate`).
"""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from agreement.ppi.estimate_jobs import run_ppi
from agreement.ppi.models import PPIDraw, PPIEstimate
from agreement.ppi.ppi_loading import load_numbers
from annotation.models import Annotation, Batch
from measures.ppi.active import (
    confidence_probabilities,
    confidence_tells_error,
    predicted_squared_error,
)
from measures.ppi.estimates import active_estimate, z_value
from measures.ppi.planner import active_labels_needed
from measures.ppi.task_estimates import estimates_document, overall
from tests.ppi_confidence_study import fixed_budget, summarise
from tests.ppi_helpers import JUDGE, likert_records
from tests.report_builders import build_task, import_answers


def test_the_error_model_is_an_isotonic_fit_over_pooled_confidences_by_hand() -> None:
    confidence = np.array([0.9, 0.9, 0.8, 0.6, 0.6])
    squared_error = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    # levels 0.6, 0.8, 0.9 with mean errors 1, 0, 0.5 (counts 2, 1, 2); the error may not rise with confidence:
    # 0.8 and 0.9 pool to (1·0 + 2·0.5)/3 = 1/3
    predicted = predicted_squared_error(confidence, squared_error, np.array([0.6, 0.7, 0.8, 0.95, 0.5, np.nan]))
    assert predicted == pytest.approx([1, 2 / 3, 1 / 3, 1 / 3, 1, 0.6])


def test_the_draw_follows_the_confidence_only_when_it_goes_with_a_smaller_error() -> None:
    rng = np.random.default_rng(3)
    confidence = rng.random(200)
    telling = (rng.random(200) < 0.6 * (1 - confidence)).astype(float)
    tells, p = confidence_tells_error(confidence, telling)
    assert tells and p is not None and p < 0.05
    q, note = confidence_probabilities(confidence, telling, confidence, uniform_share=0.1)
    u = np.sqrt(predicted_squared_error(confidence, telling, confidence))
    assert q == pytest.approx(0.9 * u / u.sum() + 0.1 / 200) and note.startswith("by confidence")
    deaf = (rng.random(200) < 0.3).astype(float)  # an error that owes nothing to the confidence
    q, note = confidence_probabilities(confidence, deaf, confidence)
    assert q == pytest.approx(np.full(200, 1 / 200)) and note.startswith("uniform")
    with pytest.raises(ValueError, match="at least 30"):
        confidence_probabilities(confidence[:10], telling[:10], confidence)


def test_the_active_estimate_with_lambda_given_is_ppi_pythons_on_the_weighted_values() -> None:
    rng = np.random.default_rng(5)
    size = 400
    y = rng.normal(3, 1, size)
    yhat = y + rng.normal(0.5, 0.6, size)
    q = rng.random(size) + 0.2
    q /= q.sum()
    rows = rng.choice(size, 120, p=q)
    weights = 1 / (size * q[rows])
    mu_f = float(yhat.mean())
    for lam in (0.0, 0.4, 1.0):
        ours = active_estimate(y[rows], yhat[rows], weights, mu_f, size, lam=lam)
        # ppi-python 0.2.3: the weights multiplied into the values, the judge's known mean as the unlabelled part
        low, high = ppi_mean_ci(weights * y[rows], weights * yhat[rows], np.full(50, mu_f), alpha=0.05, lam=lam)
        point = ppi_mean_pointestimate(weights * y[rows], weights * yhat[rows], np.full(50, mu_f), lam=lam)
        n = len(rows)
        assert ours.estimate == pytest.approx(float(point[0]), abs=1e-12)
        assert ours.half_width * np.sqrt((n - 1) / n) == pytest.approx(float(high[0] - low[0]) / 2, abs=1e-12)
    # a uniform draw of distinct items (weights 1): the PPI point estimate with the judge on every item
    flat = rng.permutation(size)[:80]
    ours = active_estimate(y[flat], yhat[flat], np.ones(80), mu_f, size, lam=0.7)
    assert ours.estimate == pytest.approx(float(ppi_mean_pointestimate(y[flat], yhat[flat], yhat, lam=0.7)[0]),
                                          abs=1e-12)


def test_the_active_plan_at_no_more_draws_is_todays_interval_by_hand() -> None:
    rng = np.random.default_rng(8)
    y = rng.normal(0, 1, 60)
    yhat = y + rng.normal(0, 0.7, 60)
    plan = active_labels_needed(y, yhat, np.ones(60), np.full(60, 1 / 600), np.full(540, 1 / 600), 600, 60,
                                target_half_width=1.0, assurance=0.0)
    lam = np.clip(np.mean((y - y.mean()) * (yhat - yhat.mean())) / np.var(yhat), 0, 1)
    assert plan.n_more == 0 and plan.n_draws == 0
    assert plan.half_width_now == pytest.approx(z_value(0.05) * np.std(y - lam * yhat) / np.sqrt(60), abs=1e-12)
    tight = active_labels_needed(y, yhat, np.ones(60), np.full(60, 1 / 600), np.full(540, 1 / 600), 600, 60,
                                 target_half_width=0.1, assurance=0.0)
    # m draws reach Σ 1 − (1 − 1/600)^m new items; the projected width z·√(V/(60 + m)) is within 0.1
    assert tight.n_draws is not None and tight.half_width_planned <= 0.1
    assert tight.n_more == int(np.ceil(540 * (1 - (1 - 1 / 600) ** tight.n_draws) - 1e-9))
    unreachable = active_labels_needed(y, yhat, np.ones(60), np.full(60, 1 / 600), np.full(540, 1 / 600), 600, 60,
                                       target_half_width=1e-4, max_draws=2000)
    assert unreachable.n_more is None and unreachable.reason.startswith("not reachable")


def test_a_judge_whose_confidence_tells_its_error_needs_under_040_of_a_people_only_study() -> None:
    """Issue 33 item 4's goal, seeded: 6,000 items, ±0.035 (people alone: 784 labels), ρ ≈ 0.7, 1,000 studies."""
    result = summarise("informative", 1000, 6000, 0.035, seed=7)
    assert result.confidence_used >= 0.99  # the safeguard rarely misses a confidence this telling
    assert result.uniform_ratio == pytest.approx(0.53, abs=0.01)  # today's uniform draw
    assert result.confidence_ratio <= 0.34
    assert result.confidence_coverage >= 0.94
    # the same half-width: on average the planned draw lands within 4% of the target
    assert result.confidence_half_width <= 0.035 * 1.04
    # equivalent labels at the width actually reached (n·(reached/target)²) are still under 0.40
    assert result.confidence_ratio * (result.confidence_half_width / 0.035) ** 2 <= 0.36


def test_an_uninformative_confidence_is_never_worse_than_a_uniform_draw() -> None:
    result = summarise("uninformative", 1000, 6000, 0.035, seed=7)
    assert result.confidence_used <= 0.06  # the safeguard drew uniformly in ≥ 94% of studies
    assert result.confidence_ratio <= result.uniform_ratio
    assert result.confidence_coverage >= 0.94
    equivalent = result.confidence_ratio * (result.confidence_half_width / 0.035) ** 2
    assert equivalent <= result.uniform_ratio * (result.uniform_half_width / 0.035) ** 2
    by_confidence, uniform, _people = fixed_budget("uninformative", 300, 6000, 400, seed=9)
    assert by_confidence <= uniform * 1.01  # same labels, same estimator: the draw costs nothing


# End to end: a likert task whose judge states a confidence that tells how far off it is.

def confident_study(name: str, n_items: int, labelled: list[int], *, seed: int = 0,
                    with_confidence: bool = True) -> tuple[object, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(4, 1.5, n_items)), 1, 7)
    confidence = rng.random(n_items)
    judge = np.clip(np.round(truth + 0.5 + rng.normal(0, 1, n_items) * 2.5 * (1 - confidence) ** 2), 1, 7)
    task = build_task("likert", name, likert_records(n_items), axes=["overall"])
    rows = [{"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm", "value": {"overall": int(judge[i])}}
            for i in range(n_items)]
    rows += [{"item": str(i + 1), "annotator": "alice", "value": {"overall": int(truth[i])}} for i in labelled]
    import_answers(task, rows)
    if with_confidence:  # as an import line's "confidence" stores it
        answers = list(Annotation.objects.filter(item__task=task, annotator__user__username=JUDGE)
                       .select_related("item"))
        for answer in answers:
            answer.confidence = round(float(confidence[int(answer.item.external_id) - 1]), 4)
        Annotation.objects.bulk_update(answers, ["confidence"])
    return task, truth


@pytest.mark.django_db
def test_ppi_batch_by_confidence_plans_and_draws_where_the_judge_is_unsure_and_the_estimate_weighs_it() -> None:
    task, truth = confident_study("ppi-confident", 600, list(range(0, 600, 6)), seed=4)  # 100 uniform labels
    out = io.StringIO()
    call_command("ppi_batch", "ppi-confident", "--judge", JUDGE, "--target-half-width", "0.12", "--seed", "2",
                 "--by-confidence", "--no-assurance", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["draw"].startswith("by confidence") and summary["plan"]["n_draws"] >= summary["n_items"]
    assert summary["n_items"] == summary["plan"]["n_more"] > 0
    draw = PPIDraw.objects.get(batch_id=summary["batch_id"])
    assert draw.judges == [JUDGE] and draw.uniform_share == pytest.approx(0.1)
    q = np.array(draw.probabilities)
    confidence = dict(task.items.values_list("pk", "annotations__confidence").filter(
        annotations__annotator__user__username=JUDGE))
    c = np.array([confidence[pk] for pk in draw.item_ids])
    assert q.sum() == pytest.approx(1) and q[c < 0.3].mean() > 2 * q[c > 0.8].mean()  # unsure: drawn more
    uniform_out = io.StringIO()
    call_command("ppi_batch", "ppi-confident", "--judge", JUDGE, "--target-half-width", "0.12", "--seed", "2",
                 "--no-assurance", "--name", "uniform plan", stdout=uniform_out)
    assert summary["n_items"] < json.loads(uniform_out.getvalue())["n_items"]  # fewer than the uniform plan
    Batch.objects.filter(name="uniform plan").delete()
    import_answers(task, [{"item": e, "annotator": "alice", "value": {"overall": int(truth[int(e) - 1])}}
                          for e in summary["items"]])
    numbers = load_numbers(task, JUDGE)
    assert numbers.draw_rows is not None and len(numbers.draw_rows) == 100 + len(draw.draws)
    row = overall(estimates_document(numbers), "rating:overall")
    expected = active_estimate(numbers.human[numbers.draw_rows, 0], numbers.judge[numbers.draw_rows, 0],
                               numbers.draw_weights, float(numbers.judge[:, 0].mean()), 600)
    assert row["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert abs(row["estimate"] - truth.mean()) <= row["half_width"]


@pytest.mark.django_db
def test_by_confidence_refuses_a_judge_without_confidence_or_too_few_labels_and_writes_nothing() -> None:
    confident_study("ppi-no-confidence", 60, list(range(0, 60, 2)), with_confidence=False)
    with pytest.raises(CommandError, match="gave no confidence"):
        call_command("ppi_batch", "ppi-no-confidence", "--judge", JUDGE, "--items", "5", "--by-confidence",
                     stdout=io.StringIO())
    confident_study("ppi-few-labels", 60, list(range(0, 60, 6)))
    with pytest.raises(CommandError, match="at least 30 are needed"):
        call_command("ppi_batch", "ppi-few-labels", "--judge", JUDGE, "--items", "5", "--by-confidence",
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command("ppi_batch", "ppi-few-labels", "--judge", JUDGE, "--items", "5", "--by-confidence",
                     "--active", f"{JUDGE},other", stdout=io.StringIO())
    assert not Batch.objects.exists() and not PPIDraw.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_pages_plan_button_draws_by_confidence_when_asked(carol) -> None:
    task, _ = confident_study("ppi-page-confident", 800, list(range(0, 800, 8)), seed=6)
    estimate = PPIEstimate.objects.create(task=task, judge=JUDGE, target_half_width=0.15)
    assert run_ppi(estimate.pk) == "done"
    estimate.refresh_from_db()
    n_uniform = estimate.document["plan"]["n_more"]
    assert n_uniform > 0
    client = Client()
    client.force_login(carol)
    page = client.get(reverse("agreement:detail", args=[task.pk])).content.decode()
    assert 'name="by_confidence"' in page
    url = reverse("agreement:ppi_batch", args=[task.pk])
    refused = client.post(url, {"judge": JUDGE, "items": str(n_uniform), "by_confidence": "1"}, follow=True)
    assert "planned for a target" in refused.content.decode() and not Batch.objects.exists()
    response = client.post(url, {"judge": JUDGE, "items": str(n_uniform), "by_confidence": "1",
                                 "target_half_width": "0.15", "alpha": "0.05"}, follow=True)
    batch = Batch.objects.get()
    assert "Created batch" in response.content.decode() and "by confidence" in batch.name
    assert PPIDraw.objects.get(batch=batch).judges == [JUDGE]
    assert 0 < batch.batch_items.count() < n_uniform
