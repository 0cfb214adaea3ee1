"""Seeded simulation of campaigns (docs/campaigns.md, "The simulation"): coverage of the pool's mean by the interval
a campaign stops with, and the labels it used against what people alone would need.

    python bench/campaign_coverage.py [--campaigns 500]

Each campaign gets its own pool (seed) and its own draws (seed): the engine plans its first batch from the judge
alone, the simulation labels each batch from the pool's hidden people's values, and the engine reviews until done
(tests/campaign_study.py). "people alone, realised" runs the same sequence with λ = 0 (t* tuned to its own
projected size) on a uniformly random order of the same pool, and reads where it first reaches the target.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.campaign import engine, sequence_widths
from measures.ppi.sequence import confidence_sequence
from tests import campaign_study

SETTINGS = {
    "sts rho 0.75, ±0.12": (lambda seed: campaign_study.sts_pool(seed), engine.CampaignSpec(0.12, (0.0, 5.0))),
    "sts rho 0.4 (weak judge), ±0.12": (lambda seed: campaign_study.sts_pool(seed, judge_noise=3.0),
                                        engine.CampaignSpec(0.12, (0.0, 5.0))),
    "share 0.3, judge 80%/10%, ±0.04": (lambda seed: campaign_study.share_pool(seed),
                                        engine.CampaignSpec(0.04, (0.0, 1.0))),
    "sts rho 0.75, ±0.05, budget 300": (lambda seed: campaign_study.sts_pool(seed),
                                        engine.CampaignSpec(0.05, (0.0, 5.0), budget_labels=300)),
    "sts rho 0.75, ±0.12, overlap 2": (lambda seed: campaign_study.sts_pool(seed),
                                       engine.CampaignSpec(0.12, (0.0, 5.0), overlap=2)),
}


def people_alone_realised(people: np.ndarray, order: np.ndarray, spec: engine.CampaignSpec) -> int:
    """Where the same sequence with λ = 0, tuned to its own projected size, first reaches the target on a
    uniformly random label order (the pool when it never does)."""
    cap = sequence_widths.bet_cap(float(people.mean()), float(people.mean()), 0.0, spec.bounds)
    _labels, t_star = sequence_widths.self_tuned_labels(spec.target_half_width, float(people.var()), people.size,
                                                        spec.bounds, spec.alpha, cap)
    constant = np.full(people.size, spec.bounds[0])
    sequence = confidence_sequence(people[order], constant[order], constant, spec.bounds, spec.alpha, t_star,
                                   min_labels=1)
    return sequence.first_within(spec.target_half_width) or people.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=500)
    n = parser.parse_args().campaigns
    for name, (pool, spec) in SETTINGS.items():
        outcomes, rhos, realised = [], [], []
        for seed in range(n):
            people, judge = pool(seed)
            rhos.append(float(np.corrcoef(people, judge)[0, 1]))
            outcome = campaign_study.run_campaign(people, judge, spec, seed=10_000 + seed)
            outcomes.append(outcome)
            if name.startswith("sts rho 0.75, ±0.12") and spec.overlap == 1:
                order = np.random.default_rng(20_000 + seed).permutation(people.size)
                realised.append(people_alone_realised(people, order, spec))
        s = campaign_study.summary(outcomes)
        print(f"{name}: {n} campaigns, rho {np.mean(rhos):.3f}, pool {people.size} items")
        print(f"  coverage at the stop {s['coverage_at_stop']:.3f}, at every look to the stop "
              f"{s['coverage_every_look']:.3f}; target reached {s['target_reached']:.3f}; "
              f"mean half-width ±{s['mean_half_width']:.4f}; {s['mean_batches']:.2f} batches")
        print(f"  labels used mean {s['mean_labels']:.1f}, median {s['median_labels']:.0f}; people alone (same "
              f"sequence, λ = 0, projected) mean {s['mean_people_only']:.1f}, median {s['median_people_only']:.0f}; "
              f"ratio mean {s['mean_ratio']:.3f}, median {s['median_ratio']:.3f}")
        print(f"  fixed-n people-only study (z·sd/W)²: mean {s['mean_fixed_n']:.1f}, "
              f"labels used / it {s['mean_ratio_fixed_n']:.3f}")
        if realised:
            used = np.array([o.review.labels_used for o in outcomes], dtype=float)
            print(f"  people alone, realised (a random order of the same pool): mean {np.mean(realised):.1f}, median "
                  f"{np.median(realised):.0f}; labels used / it {np.mean(used / np.array(realised)):.3f}")


if __name__ == "__main__":
    main()
