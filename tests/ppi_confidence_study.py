"""Seeded studies of confidence-driven sampling (measures/ppi/active.py, planner.active_labels_needed), shared
by tests/test_ppi_confidence.py (short) and bench/ppi_confidence.py (long): the pure code, no database.

A study: M items whose human label is a 0/1 share (p = 0.5); a judge labels every item with a confidence; people
label a uniform burn-in of 100 items. Three judges, all wrong on about 15% of items (ρ ≈ 0.7 between its labels and
the people's):

- `informative`: a stated confidence c in [0.5, 1], calibrated (P(wrong | c) = 1 − c), c = 0.5 + 0.5·B with
  B ~ Beta(0.7, 0.3): most items sure and right, a minority near a coin flip.
- `uninformative`: the same confidences, but P(wrong) = 0.15 whatever c says.
- `issue3`: the escalation judge of issue 33 item 3, P(correct | c) = min(1, 0.3 + 0.68c), c ~ Beta(5, 1.2):
  wrong ~2% even when most confident, so the error varies less with c.

Each study plans a target half-width two ways from the same burn-in (`planner.labels_needed` for a uniform batch,
`planner.active_labels_needed` for a confidence-driven one), labels what each plan asks, and measures the interval
against the mean of all M human labels. A people-only study needs n₀ = (z·sd/H)² labels for ±H (sd of all M).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from measures.ppi.active import confidence_probabilities, draw_until_new, pooled_draws
from measures.ppi.estimates import Sample, active_estimate, estimate, z_value
from measures.ppi.planner import active_labels_needed, labels_needed

JUDGES = ("informative", "uninformative", "issue3")
BURN_IN = 100


def judge_labels(kind: str, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(human labels, judge labels, judge confidences) of `size` items."""
    y = (rng.random(size) < 0.5).astype(float)
    if kind == "issue3":
        confidence = rng.beta(5, 1.2, size)
        wrong = rng.random(size) < 1 - np.minimum(1, 0.3 + 0.68 * confidence)
    else:
        confidence = 0.5 + 0.5 * rng.beta(0.7, 0.3, size)
        wrong = rng.random(size) < ((1 - confidence) if kind == "informative" else 0.15)
    return y, np.where(wrong, 1 - y, y), confidence


@dataclass(frozen=True)
class Outcome:
    """One study: labels each plan asked for (burn-in included), the half-width reached and whether it covered."""

    people_only: float
    uniform_labels: int
    uniform_half_width: float
    uniform_covered: bool
    confidence_labels: int
    confidence_half_width: float
    confidence_covered: bool
    confidence_used: bool


def planned_study(kind: str, size: int, target: float, rng: np.random.Generator,
                  assurance: float = 0.0) -> Outcome:
    """Plan ±target both ways from one burn-in, label what each plan asks, and measure."""
    y, yhat, confidence = judge_labels(kind, size, rng)
    z = z_value(0.05)
    order = rng.permutation(size)
    burn = order[:BURN_IN]
    labelled = np.zeros(size, dtype=bool)
    labelled[burn] = True
    rest = order[BURN_IN:]
    uniform_plan = labels_needed(Sample(y[burn], yhat[burn], yhat[rest]), target, assurance=assurance)
    assert uniform_plan.n_more is not None
    uniform_rows = order[:BURN_IN + uniform_plan.n_more]
    uniform_unlabelled = order[BURN_IN + uniform_plan.n_more:]
    uniform = estimate(Sample(y[uniform_rows], yhat[uniform_rows], yhat[uniform_unlabelled]))
    q, note = confidence_probabilities(confidence[burn], (y[burn] - yhat[burn]) ** 2, confidence)
    mu_f = float(yhat.mean())
    plan = active_labels_needed(y[burn], yhat[burn], np.ones(BURN_IN), q[burn], q[~labelled], size, BURN_IN,
                                target, assurance=assurance)
    assert plan.n_more is not None
    draws = draw_until_new(q, labelled, plan.n_more, rng) if plan.n_more else []
    rows, weights = pooled_draws(size, burn, [(q, draws)])
    active = active_estimate(y[rows], yhat[rows], weights, mu_f, size)
    truth = float(y.mean())
    assert uniform.half_width is not None and active.half_width is not None and active.estimate is not None
    assert uniform.estimate is not None
    return Outcome((z * float(y.std()) / target) ** 2,
                   BURN_IN + uniform_plan.n_more, uniform.half_width,
                   abs(uniform.estimate - truth) <= uniform.half_width,
                   BURN_IN + plan.n_more, active.half_width, abs(active.estimate - truth) <= active.half_width,
                   note.startswith("by confidence"))


@dataclass(frozen=True)
class Summary:
    studies: int
    uniform_ratio: float  # mean labels of the uniform plan / n₀
    confidence_ratio: float  # mean labels of the confidence-driven plan / n₀
    uniform_reached: float  # share of studies whose interval was within the target
    confidence_reached: float
    uniform_coverage: float
    confidence_coverage: float
    uniform_half_width: float  # mean
    confidence_half_width: float
    confidence_used: float  # share of studies that drew by confidence (the rest: uniform, by the safeguard)

    def line(self, kind: str, target: float, assurance: float) -> str:
        margin = "with the assurance margin" if assurance else "on the projection alone"
        return (f"{kind:13s} ±{target} ({margin}, {self.studies} studies): labels / people-only: "
                f"uniform {self.uniform_ratio:.3f}, by confidence {self.confidence_ratio:.3f}; within ±{target}: "
                f"{self.uniform_reached:.1%} / {self.confidence_reached:.1%}; coverage {self.uniform_coverage:.1%} / "
                f"{self.confidence_coverage:.1%}; mean ±{self.uniform_half_width:.4f} / "
                f"±{self.confidence_half_width:.4f}; drew by confidence in {self.confidence_used:.0%}")


def summarise(kind: str, studies: int, size: int, target: float, seed: int, assurance: float = 0.0) -> Summary:
    rng = np.random.default_rng(seed)
    runs = [planned_study(kind, size, target, rng, assurance) for _ in range(studies)]

    def mean(values: list[float]) -> float:
        return float(np.mean(values))

    return Summary(
        studies,
        mean([r.uniform_labels / r.people_only for r in runs]),
        mean([r.confidence_labels / r.people_only for r in runs]),
        mean([r.uniform_half_width <= target for r in runs]), mean([r.confidence_half_width <= target for r in runs]),
        mean([r.uniform_covered for r in runs]), mean([r.confidence_covered for r in runs]),
        mean([r.uniform_half_width for r in runs]), mean([r.confidence_half_width for r in runs]),
        mean([r.confidence_used for r in runs]))


def fixed_budget(kind: str, studies: int, size: int, labels: int, seed: int) -> tuple[float, float, float]:
    """Mean half-widths with `labels` labels: drawn by confidence (after the burn-in), drawn uniformly (the same
    estimator, weights 1), and people alone (z·sd/√labels)."""
    rng = np.random.default_rng(seed)
    confident, uniform = [], []
    people = 0.0
    for _ in range(studies):
        y, yhat, confidence = judge_labels(kind, size, rng)
        order = rng.permutation(size)
        burn = order[:BURN_IN]
        labelled = np.zeros(size, dtype=bool)
        labelled[burn] = True
        q, _note = confidence_probabilities(confidence[burn], (y[burn] - yhat[burn]) ** 2, confidence)
        draws = draw_until_new(q, labelled, labels - BURN_IN, rng)
        rows, weights = pooled_draws(size, burn, [(q, draws)])
        mu_f = float(yhat.mean())
        confident.append(active_estimate(y[rows], yhat[rows], weights, mu_f, size).half_width)
        flat = order[:labels]
        uniform.append(active_estimate(y[flat], yhat[flat], np.ones(labels), mu_f, size).half_width)
        people += z_value(0.05) * float(y.std()) / math.sqrt(labels) / studies
    return float(np.mean(confident)), float(np.mean(uniform)), people

