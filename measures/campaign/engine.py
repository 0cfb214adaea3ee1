"""A campaign's decisions, numbers in and numbers out (no Django): the first batch from the judge alone, then after
each batch either stop (target reached, budget spent) or the size of the next one (docs/campaigns.md).

A pool of M items has the judge's number on every one; people label uniformly drawn batches of items no person
has labelled, each item by `overlap` people (its value: their mean), so a batch of b items costs b·overlap human
labels. The campaign estimates the pool's mean of the people's values with the anytime-valid confidence sequence
(agreement/ppi/sequence.py, the judge taken in as PPI++ does), which holds at every look at once: stopping the
first time it is within ±W keeps its 1 − α guarantee, however often the campaign looks and however the batches
were sized, as long as each size depends only on the labels before it (it does: `review` sees nothing else).

Its t* (the labels the bets are tuned for) must be fixed before the first label, so `plan_start` fixes it from
the judge alone: the people's spread is taken to be the judge's, and the judge's correlation with them to be
`expected_rho`; a wrong guess costs width (a few per cent over a factor of two in t*), never validity. The
first batch is half that plan (at least MIN_FIRST_BATCH items), or a stated pilot: it measures the judge before
the campaign commits more. Each later batch is the labels the sequence is projected to still need
(measures/campaign/sequence_widths.py) with the PPI planner's assurance margin, never over the budget.

Draws are uniform (`draw_batch`): the sequence needs the labels to arrive in a uniformly random order of the
pool's items, which uniform batches handed out in their draw order give. Sampling by the judge's confidence is
refused here (`SamplingNotValid`): its labels are not a uniform order, so this sequence would not hold for them
(docs/campaigns.md, "What is not built yet").
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from measures.campaign import sequence_widths as widths
from measures.ppi.estimates import Sample, correlation, power_tuned_lambda
from measures.ppi.planner import DEFAULT_ASSURANCE
from measures.ppi.sequence import confidence_sequence

MIN_FIRST_BATCH = 30  # items: enough for the judge's ρ and λ to be estimated before the next plan
MIN_BATCH = 10  # items: a later batch smaller than this costs a round of waiting for little
FIRST_BATCH_SHARE = 0.5  # of the plan from the judge alone
EXPECTED_RHO = 0.7  # the judge's correlation with people assumed before any label (t* and the first batch only)
SAMPLINGS = ("uniform", "confidence")

COLLECTING, DONE = "collecting", "done"
TARGET_REACHED, BUDGET_SPENT, POOL_LABELLED = "target reached", "budget spent", "every item labelled"


class SamplingNotValid(ValueError):
    """A sampling the campaign's sequence does not hold for."""


@dataclass(frozen=True)
class CampaignSpec:
    """What a campaign is asked: ±`target_half_width` at 1 − `alpha` on an estimand within `bounds`, at most
    `budget_labels` human labels (None: the pool), each item labelled by `overlap` people."""

    target_half_width: float
    bounds: tuple[float, float]
    alpha: float = 0.05
    budget_labels: int | None = None
    overlap: int = 1
    sampling: str = "uniform"
    pilot_items: int | None = None
    expected_rho: float = EXPECTED_RHO

    def check(self, n_items: int) -> None:
        """Raise ValueError naming the field when the campaign cannot be run on a pool of `n_items`."""
        lo, hi = self.bounds
        problems = []
        if not (math.isfinite(self.target_half_width) and self.target_half_width > 0):
            problems.append(f"target_half_width: must be a positive number, got {self.target_half_width!r}")
        if not lo < hi:
            problems.append(f"bounds: must be (lo, hi) with lo < hi, got {self.bounds!r}")
        if not 0 < self.alpha < 1:
            problems.append(f"alpha: must be between 0 and 1, got {self.alpha!r}")
        if self.overlap < 1:
            problems.append(f"overlap: must be at least 1, got {self.overlap!r}")
        if self.budget_labels is not None and self.budget_labels < self.overlap:
            problems.append(f"budget_labels: {self.budget_labels} cannot pay for one item at overlap {self.overlap}")
        if self.sampling not in SAMPLINGS:
            problems.append(f"sampling: must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}")
        if self.pilot_items is not None and not 2 <= self.pilot_items <= n_items:
            problems.append(f"pilot_items: must be between 2 and the pool's {n_items} items, got {self.pilot_items}")
        if not -1 <= self.expected_rho <= 1:
            problems.append(f"expected_rho: must be between −1 and 1, got {self.expected_rho!r}")
        if n_items < 2:
            problems.append(f"the pool has {n_items} item(s); a campaign needs at least 2")
        if problems:
            raise ValueError("; ".join(problems))
        if self.sampling == "confidence":
            raise SamplingNotValid("sampling: by confidence is not built for campaigns yet: the anytime-valid "
                                   "sequence holds only for uniformly drawn labels (docs/campaigns.md)")

    def budget_items(self, n_items: int) -> int:
        """The most items the budget pays for (the pool when there is no budget)."""
        return n_items if self.budget_labels is None else min(n_items, self.budget_labels // self.overlap)


@dataclass(frozen=True)
class StartPlan:
    """The first batch (items) and the t* fixed for the whole campaign, both from the judge alone."""

    first_batch_items: int
    t_star: int
    planned_items: int  # the labels (items) the sequence is projected to need at the expected ρ
    people_only_labels: int  # the same, people alone (λ = 0), the judge's spread standing in for theirs
    half_width_at_budget: float  # projected at the expected ρ after every item the budget pays for
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_start(judge: np.ndarray, spec: CampaignSpec) -> StartPlan:
    """Plan from the judge's values on the M pool items alone (no label yet): the people's variance is taken to
    be the judge's, and x's variance (1 − expected ρ²) of it; t* is the labels that plan needs, tuned to itself."""
    judge = np.asarray(judge, dtype=float)
    n_items = judge.size
    spec.check(n_items)
    spread = float(np.var(judge))
    if spread == 0:  # a constant judge says nothing of the people's spread: plan for the scale's largest
        spread = (spec.bounds[1] - spec.bounds[0]) ** 2 / 4
    mean = float(judge.mean())
    lam = max(spec.expected_rho, 0.0)
    cap = widths.bet_cap(mean, mean, lam, spec.bounds)
    variance = spread * (1 - spec.expected_rho**2)
    planned, t_star = widths.self_tuned_labels(spec.target_half_width, variance, n_items, spec.bounds, spec.alpha,
                                               cap)
    people_cap = widths.bet_cap(mean, mean, 0.0, spec.bounds)
    people, _ = widths.self_tuned_labels(spec.target_half_width, spread, n_items, spec.bounds, spec.alpha,
                                         people_cap)
    first = spec.pilot_items or max(MIN_FIRST_BATCH, math.ceil(FIRST_BATCH_SHARE * planned))
    budget = spec.budget_items(n_items)
    at_budget = float(widths.projected_half_widths(variance, n_items, spec.bounds, spec.alpha, t_star, cap,
                                                   up_to=budget)[-1])
    reason = "" if planned <= budget else (f"the judge alone projects {planned} items for ±{spec.target_half_width:g}"
                                           f"; the budget pays for {budget}, projected ±{at_budget:.3g}")
    return StartPlan(min(first, budget), t_star, planned, people, at_budget, reason)


@dataclass(frozen=True)
class Review:
    """Where the campaign stands after its labels so far; `next_batch_items` is what to draw next when the
    batches handed out have run out (0 once done)."""

    state: str
    reason: str
    estimate: float
    ci_low: float
    ci_high: float
    labels_used: int  # human labels: items × overlap, counted up to the look the campaign stopped at
    items_used: int
    target_reached_at: int | None  # items labelled when the sequence first was within the target
    next_batch_items: int
    lam: float | None
    rho: float | None
    judge_mean_error: float | None  # mean of judge − people on the labelled items
    people_only_labels: int
    fixed_n_people_labels: int
    # the sequence at every look up to the counted one: (human labels, estimate, low, high), for its chart
    looks: tuple[tuple[int, float, float, float], ...] = ()

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "half_width": self.half_width}


def review(judge: np.ndarray, rows: np.ndarray, values: np.ndarray, spec: CampaignSpec, t_star: int) -> Review:
    """Review the labelled items: `rows` are pool indices in the order their labels arrived, `values` the
    people's value of each (the mean of its `overlap` labels). Done at the first look within ±W (the campaign is
    taken to look after every item; the items after it are not counted), when the budget is spent or every item
    is labelled; otherwise the next batch's size."""
    judge, values = np.asarray(judge, dtype=float), np.asarray(values, dtype=float)
    rows = np.asarray(rows, dtype=int)
    n_items, n = judge.size, rows.size
    spec.check(n_items)
    if n < 1 or rows.size != values.size or np.unique(rows).size != n:
        raise ValueError(f"labels: expected one value per distinct labelled item, got {n} rows, {values.size} values")
    sequence = confidence_sequence(values, judge[rows], judge, spec.bounds, spec.alpha, t_star, min_labels=1)
    reached = sequence.first_within(spec.target_half_width)
    budget = spec.budget_items(n_items)
    if reached is not None and reached > budget:  # labels past the budget never count
        reached = None
    if reached is not None:
        look, state, reason = reached, DONE, TARGET_REACHED
    elif n >= n_items:
        look, state, reason = n, DONE, POOL_LABELLED
    elif n >= budget:
        look, state, reason = budget, DONE, BUDGET_SPENT
    else:
        look, state, reason = n, COLLECTING, ""
    used_values = values[:look]
    sample = Sample(used_values, judge[rows[:look]], np.delete(judge, rows[:look]))
    lam = power_tuned_lambda(sample) if look >= 2 else None
    next_items = 0 if state == DONE else next_batch_items(judge, rows, values, spec, t_star, lam or 0.0)
    at = look - 1
    return Review(state, reason, float(sequence.estimate[at]), float(sequence.low[at]), float(sequence.high[at]),
                  look * spec.overlap, look, reached, next_items, lam,
                  correlation(used_values, judge[rows[:look]]) if look >= 2 else None,
                  float(np.mean(judge[rows[:look]] - used_values)),
                  widths.people_only_labels(used_values, n_items, spec.target_half_width, spec.bounds, spec.alpha)
                  * spec.overlap,
                  widths.fixed_n_people_labels(used_values, spec.target_half_width, spec.alpha) * spec.overlap,
                  looks=tuple((int(sequence.t[i]) * spec.overlap, float(sequence.estimate[i]), float(sequence.low[i]),
                               float(sequence.high[i])) for i in range(look)))


def next_batch_items(judge: np.ndarray, rows: np.ndarray, values: np.ndarray, spec: CampaignSpec, t_star: int,
                     lam: float) -> int:
    """Items to draw next: the sequence's projected need from the variance of y − λ·ŷ on the labels so far, with
    the assurance margin, less the items labelled; at least MIN_BATCH, never past the budget or the pool."""
    n_items, n = judge.size, rows.size
    variance = float(np.var(values - lam * judge[rows]))
    cap = widths.bet_cap(float(values.mean()), float(judge.mean()), lam, spec.bounds)
    needed = widths.labels_to_reach(spec.target_half_width, variance, n_items, spec.bounds, spec.alpha, t_star, cap,
                                    n_labelled=n, assurance=DEFAULT_ASSURANCE)
    room = spec.budget_items(n_items) - n
    return int(min(max(needed - n, MIN_BATCH), room))


def draw_batch(labelled: np.ndarray, n_batch: int, rng: np.random.Generator) -> np.ndarray:
    """`n_batch` pool rows drawn uniformly without replacement from the items no person has labelled
    (`labelled`, a mask over the pool), in their draw order: hand them out in that order."""
    candidates = np.flatnonzero(~np.asarray(labelled, dtype=bool))
    if not 0 < n_batch <= candidates.size:
        raise ValueError(f"a batch of {n_batch} items asked for, {candidates.size} items have no label")
    return rng.permutation(candidates)[:n_batch]
