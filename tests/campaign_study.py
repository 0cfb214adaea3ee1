"""Simulated campaigns, shared by tests/test_campaign_engine.py and bench/campaign_coverage.py (docs/campaigns.md,
"The simulation").

A pool's people's values are known to the simulation (the oracle) and hidden from the engine, which sees the
judge's values on every item and the people's values only on the items it drew, in the order it drew them.

**The STS pool** is simulated (no human STS ratings ship with the project): 1,500 pairs rated on 0–5 in steps
of 0.1, spread over the whole scale (60% uniform, 27% near-paraphrases around 3.8, 13% unrelated pairs around
1.0; mean ≈ 2.7, sd ≈ 1.46), and an LLM judge that answers whole numbers, 0.3 too high, with noise of sd 1.25:
ρ ≈ 0.75 with the people.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from measures.campaign import engine
from measures.ppi.sequence import confidence_sequence

STS_ITEMS = 1500
STS_JUDGE_BIAS = 0.3
STS_JUDGE_NOISE = 1.25


def sts_pool(seed: int, n_items: int = STS_ITEMS, judge_noise: float = STS_JUDGE_NOISE
             ) -> tuple[np.ndarray, np.ndarray]:
    """(people, judge): the simulated STS pool's people's rating per pair and the judge's, seeded."""
    rng = np.random.default_rng(seed)
    n_paraphrase, n_unrelated = round(0.27 * n_items), round(0.13 * n_items)
    latent = np.concatenate([rng.uniform(0, 5, n_items - n_paraphrase - n_unrelated),
                             rng.normal(3.8, 0.7, n_paraphrase), rng.normal(1.0, 0.6, n_unrelated)])
    people = np.clip(np.round(latent + rng.normal(0, 0.25, n_items), 1), 0, 5)
    judge = np.clip(np.round(people + STS_JUDGE_BIAS + rng.normal(0, judge_noise, n_items)), 0, 5)
    order = rng.permutation(n_items)  # the pool's file order says nothing of the values
    return people[order], judge[order]


def share_pool(seed: int, n_items: int = 2000, share: float = 0.3, judge_finds: float = 0.8,
               false_alarms: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """(people, judge): a yes/no label with P(yes) = `share`; the judge says yes for `judge_finds` of the yes
    items and `false_alarms` of the others."""
    rng = np.random.default_rng(seed)
    people = (rng.random(n_items) < share).astype(float)
    judge = np.where(people == 1, rng.random(n_items) < judge_finds, rng.random(n_items) < false_alarms)
    return people, judge.astype(float)


@dataclass(frozen=True)
class Outcome:
    """One simulated campaign: its last review, its batches' sizes, and whether its interval held."""

    review: engine.Review
    batches: list[int]
    pool_mean: float
    covers_at_stop: bool
    covers_at_every_look: bool
    t_star: int


def run_campaign(people: np.ndarray, judge: np.ndarray, spec: engine.CampaignSpec, seed: int) -> Outcome:
    """Drive one campaign to its end: draw the first batch from the judge alone, label it (the oracle), review,
    draw the next batch the review asks for, until the review says done."""
    rng = np.random.default_rng(seed)
    start = engine.plan_start(judge, spec)
    labelled = np.zeros(judge.size, dtype=bool)
    rows: list[int] = []
    batches: list[int] = []
    size = start.first_batch_items
    while True:
        batch = engine.draw_batch(labelled, size, rng)
        batches.append(int(batch.size))
        labelled[batch] = True
        rows.extend(int(row) for row in batch)
        order = np.asarray(rows)
        review = engine.review(judge, order, people[order], spec, start.t_star)
        if review.state == engine.DONE:
            break
        size = review.next_batch_items
    pool_mean = float(people.mean())
    covers = review.ci_low - 1e-9 <= pool_mean <= review.ci_high + 1e-9
    return Outcome(review, batches, pool_mean, covers, covers and every_look_covers(people, judge, order, spec,
                                                                                      start.t_star, review.items_used),
                   start.t_star)


def every_look_covers(people: np.ndarray, judge: np.ndarray, rows: np.ndarray, spec: engine.CampaignSpec,
                      t_star: int, up_to: int) -> bool:
    """Whether the sequence covered the pool's mean at every look up to the campaign's stop (the guarantee)."""
    rows = rows[:up_to]
    sequence = confidence_sequence(people[rows], judge[rows], judge, spec.bounds, spec.alpha, t_star, min_labels=1)
    mean = people.mean()
    return bool(np.all((sequence.low <= mean + 1e-9) & (sequence.high >= mean - 1e-9)))


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    """Coverage and labels over many campaigns: labels used against what people alone would need (the campaign's
    own projection at its stop, and the fixed-n study's)."""
    used = np.array([o.review.labels_used for o in outcomes], dtype=float)
    people_only = np.array([o.review.people_only_labels for o in outcomes], dtype=float)
    fixed_n = np.array([o.review.fixed_n_people_labels for o in outcomes], dtype=float)
    return {
        "campaigns": len(outcomes),
        "coverage_at_stop": float(np.mean([o.covers_at_stop for o in outcomes])),
        "coverage_every_look": float(np.mean([o.covers_at_every_look for o in outcomes])),
        "target_reached": float(np.mean([o.review.reason == engine.TARGET_REACHED for o in outcomes])),
        "mean_labels": float(used.mean()), "median_labels": float(np.median(used)),
        "mean_people_only": float(people_only.mean()), "median_people_only": float(np.median(people_only)),
        "mean_ratio": float(np.mean(used / people_only)), "median_ratio": float(np.median(used / people_only)),
        "mean_fixed_n": float(fixed_n.mean()), "mean_ratio_fixed_n": float(np.mean(used / fixed_n)),
        "mean_half_width": float(np.mean([o.review.half_width for o in outcomes])),
        "mean_batches": float(np.mean([len(o.batches) for o in outcomes])),
    }
