"""Active sampling (measures/ppi/active.py, estimates.active_estimate): draw probabilities, the pooled draws of
a uniform and an active phase, the estimator by hand, and a seeded simulation: covers the full-data mean in
≥ 93% of 1,000 draws and is narrower than uniform sampling where the judge's spread tells its error."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.ppi.models import PPIDraw
from agreement.ppi.ppi_loading import load_numbers
from annotation.models import Batch
from measures.ppi.active import draw_probabilities, draw_until_new, pooled_draws, usable_prefix
from measures.ppi.estimates import active_estimate, z_value
from measures.ppi.task_estimates import estimates_document, overall
from tests.ppi_helpers import JUDGE, rated_likert_study
from tests.report_builders import import_answers


def test_draw_probabilities_mix_the_uncertainty_with_a_uniform_share() -> None:
    q = draw_probabilities(np.array([0.0, 1.0, 3.0, 0.0]), uniform_share=0.2)
    # (1 − 0.2)·u/4 + 0.2/4: 0.05, 0.25, 0.65, 0.05
    assert q == pytest.approx([0.05, 0.25, 0.65, 0.05])
    assert draw_probabilities(np.zeros(4)) == pytest.approx([0.25] * 4)
    with pytest.raises(ValueError, match="non-negative"):
        draw_probabilities(np.array([1.0, -1.0]))


def test_draws_continue_until_enough_new_items_and_a_partly_labelled_batch_uses_its_prefix() -> None:
    labelled = np.array([True, True, False, False, False, False])
    draws = draw_until_new(np.full(6, 1 / 6), labelled, 3, np.random.default_rng(1))
    new = [d for d in dict.fromkeys(draws) if not labelled[d]]
    assert len(new) == 3 and not labelled[draws[-1]]
    now = labelled.copy()
    now[new[0]] = True  # people labelled the first new item of the batch so far
    prefix = usable_prefix(draws, now)
    assert all(now[d] for d in prefix) and (len(prefix) == len(draws) or not now[draws[len(prefix)]])


def test_pooled_draws_weigh_each_draw_by_the_mixture_of_the_phases() -> None:
    q = np.array([0.1, 0.2, 0.3, 0.4])
    rows, weights = pooled_draws(4, [0, 1], [(q, [3, 3, 2])])
    # p = (2·(1/4) + 3·q)/5 = (0.5 + 3q)/5: item 0 0.16, 1 0.22, 2 0.28, 3 0.34
    assert rows.tolist() == [0, 1, 3, 3, 2]
    assert weights == pytest.approx([1 / (4 * 0.16), 1 / (4 * 0.22), 1 / (4 * 0.34), 1 / (4 * 0.34), 1 / (4 * 0.28)])


def test_the_active_estimate_by_hand() -> None:
    y, f, w = np.array([1.0, 2, 4]), np.array([2.0, 2, 5]), np.array([0.5, 1.0, 2.0])
    mu_f = 3.0
    a, b = w * y, w * f - mu_f  # a = 0.5, 2, 8; b = −2, −1, 7
    lam = min(max(np.cov(a, b)[0, 1] / np.var(b, ddof=1), 0), 1)
    terms = a - lam * b
    result = active_estimate(y, f, w, mu_f, n_items=10)
    assert result.lam == pytest.approx(lam) and result.estimate == pytest.approx(terms.mean())
    assert result.ci_high - result.estimate == pytest.approx(z_value(0.05) * terms.std(ddof=1) / np.sqrt(3))
    assert result.classical_estimate == pytest.approx(a.mean()) and result.n_unlabelled == 10


def heteroscedastic(seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray]:
    """Ratings 1–7; a judge 0.8 too high whose noise grows with an item's difficulty, and a spread (the
    uncertainty the judges show) that tracks that noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random(3000)
    spread = 0.1 + 3 * difficulty**3
    truth = np.clip(np.round(rng.normal(4, 1.4, 3000)), 1, 7)
    return rng, truth, truth + 0.8 + rng.normal(0, 1, 3000) * spread, spread


def test_active_sampling_covers_and_narrows_the_interval_over_1000_seeded_draws() -> None:
    rng, truth, judge, spread = heteroscedastic(1)
    size, target, mu_f = len(truth), truth.mean(), judge.mean()
    q = draw_probabilities(spread)
    covered, active_width, uniform_width = 0, 0.0, 0.0
    for _ in range(1000):
        uniform_phase = rng.permutation(size)[:50]
        rows, w = pooled_draws(size, uniform_phase, [(q, rng.choice(size, 100, p=q))])
        result = active_estimate(truth[rows], judge[rows], w, mu_f, size)
        covered += result.ci_low <= target <= result.ci_high
        active_width += result.half_width
        same_n = rng.choice(size, 150)  # 150 uniform draws, the same estimator with equal weights
        uniform_width += active_estimate(truth[same_n], judge[same_n], np.ones(150), mu_f, size).half_width
    assert covered / 1000 >= 0.93
    assert active_width < 0.95 * uniform_width


def add_judge(task, name: str, values: np.ndarray) -> None:
    import_answers(task, [{"item": str(i + 1), "annotator": name, "annotator_agent": "llm",
                           "value": {"overall": int(v)}} for i, v in enumerate(values)])


@pytest.mark.django_db
def test_ppi_batch_active_draws_where_judges_disagree_and_the_estimate_weighs_the_draws() -> None:
    task, truth = rated_likert_study("ppi-active", 300, list(range(0, 300, 5)), seed=12)  # 60 uniform labels
    hard = np.arange(300) % 2 == 0  # two more judges: they agree on the odd rows, differ by 3 on the even ones
    add_judge(task, "judge-b", truth)
    add_judge(task, "judge-c", np.where(hard, np.where(truth <= 4, truth + 3, truth - 3), truth))
    out = io.StringIO()
    call_command("ppi_batch", "ppi-active", "--judge", JUDGE, "--items", "40", "--seed", "3",
                 "--active", "judge-b,judge-c", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["n_items"] == 40 and summary["draw"].startswith("active")
    draw = PPIDraw.objects.get(batch_id=summary["batch_id"])
    q = np.array(draw.probabilities)
    assert q.sum() == pytest.approx(1) and q[hard].min() > q[~hard].max()  # disagreement draws more often
    odd = sum(int(e) % 2 == 0 for e in summary["items"])  # external id n is item n − 1: even ids are odd rows
    assert odd < 20  # most of the batch is where the judges disagree
    # people label the first 25 items of the batch: the draws up to the first unlabelled item count
    import_answers(task, [{"item": e, "annotator": "alice", "value": {"overall": int(truth[int(e) - 1])}}
                          for e in summary["items"][:25]])
    numbers = load_numbers(task, JUDGE)
    row_of = {pk: i for i, pk in enumerate(draw.item_ids)}
    prefix = usable_prefix([row_of[pk] for pk in draw.draws], numbers.labelled)
    uniform = [r for r in np.flatnonzero(numbers.labelled)
               if numbers.items[r] not in set(summary["items"])]
    rows, weights = pooled_draws(300, uniform, [(q, prefix)])
    assert len(uniform) == 60 and numbers.draw_rows.tolist() == rows.tolist()
    doc = estimates_document(numbers)
    expected = active_estimate(numbers.human[rows, 0], numbers.judge[rows, 0], weights,
                               float(numbers.judge[:, 0].mean()), 300)
    row = overall(doc, "rating:overall")
    assert doc["sampling"].startswith("active") and row["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high), abs=1e-12)
    assert "not computed for actively drawn labels" in doc["sequences"][0]["reason"]


@pytest.mark.django_db
def test_active_sampling_refuses_one_judge_or_a_person_and_writes_nothing() -> None:
    rated_likert_study("ppi-active-bad", 30, [0, 1, 2])
    for judges, message in [(JUDGE, "at least two judges"), (f"{JUDGE},alice", "'alice' is a person"),
                            (f"{JUDGE},nobody", "no annotator named 'nobody'")]:
        with pytest.raises(CommandError, match=message):
            call_command("ppi_batch", "ppi-active-bad", "--judge", JUDGE, "--items", "3", "--active", judges,
                         stdout=io.StringIO())
    assert not Batch.objects.exists() and not PPIDraw.objects.exists()
