"""Would drawing by the judge's confidence save labels in a campaign, once its stopping rule is made valid for such
draws? A probe, not used by the engine (docs/campaigns.md, "What is not built yet").

    python bench/campaign_by_confidence.py [--runs 20]

The campaign's sequence needs labels in a uniformly random order, which a draw by confidence is not. A sequence
valid for it: draws with replacement from known probabilities q (each q_i ≥ τ/M), each draw j giving
z_j = λ·μ_f + (y − λ·ŷ)/(M·q_i), whose conditional mean is the pool's mean μ* (μ_f the judge's mean over the pool),
and the betting sequence of "Estimating means of bounded random variables by betting" (Waudby-Smith & Ramdas,
arXiv:2010.09686) on the z with replacement: its predictable plug-in bets, capped so that no possible z can bankrupt
a bettor, which the largest weight 1/(M·min q) makes small. The pool: the simulated STS pool of
tests/campaign_study.py, with a judge whose error has sd 0.5 on 70% of the items ("sure") and 2.2 on the others,
and the best case for drawing by confidence: q from the true error sd (the engine would have to learn it),
λ fixed at 0.7. It prints the new items each needs to reach ±0.12 against the uniform campaign's sequence
(without replacement) on the same pool.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.ppi.sequence import confidence_sequence
from tests.campaign_study import sts_pool

BOUNDS = (0.0, 5.0)
TARGET, ALPHA, T_STAR, LAM = 0.12, 0.05, 400, 0.7
GRID = np.linspace(*BOUNDS, 1001)


def pool() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(people, judge, the judge's error sd per item)."""
    people, _judge = sts_pool(34)
    rng = np.random.default_rng(5)
    error_sd = np.where(rng.random(people.size) < 0.7, 0.5, 2.2)
    judge = np.clip(np.round(people + 0.3 + rng.normal(0, 1, people.size) * error_sd), *BOUNDS)
    return people, judge, error_sd


def weighted_run(people: np.ndarray, judge: np.ndarray, q: np.ndarray, seed: int) -> tuple[int, int, bool]:
    """(new items, draws, covered) when the weighted sequence first is within ±TARGET."""
    rng = np.random.default_rng(seed)
    lo, hi = BOUNDS
    n_items, level = people.size, math.log(2 / ALPHA)
    mu_f = float(judge.mean())
    z_min = LAM * mu_f + float(np.min((lo - LAM * judge) / (n_items * q)))
    z_max = LAM * mu_f + float(np.max((hi - LAM * judge) / (n_items * q)))
    log_up, log_down = np.zeros(GRID.size), np.zeros(GRID.size)
    values: list[float] = []
    variance = (hi - lo) ** 2 / 4
    labelled: set[int] = set()
    for draw in range(1, 50 * n_items):
        item = int(rng.choice(n_items, p=q))
        labelled.add(item)
        z = LAM * mu_f + (people[item] - LAM * judge[item]) / (n_items * q[item])
        bet = math.sqrt(2 * level / (variance * max(draw, T_STAR)))
        bet_up = np.minimum(bet, 0.75 / np.maximum(GRID - z_min, 1e-12))
        bet_down = np.minimum(bet, 0.75 / np.maximum(z_max - GRID, 1e-12))
        log_up += np.log(np.maximum(1 + bet_up * (z - GRID), 1e-300))
        log_down += np.log(np.maximum(1 - bet_down * (z - GRID), 1e-300))
        values.append(z)
        mean = float(np.mean(values))
        variance = ((hi - lo) ** 2 / 4 + float(np.sum((np.array(values) - mean) ** 2))) / (len(values) + 1)
        alive = GRID[(log_up < level) & (log_down < level)]
        if alive.size and (alive.max() - alive.min()) / 2 + (hi - lo) / 1000 <= TARGET:
            return len(labelled), draw, bool(alive.min() <= people.mean() <= alive.max())
    raise RuntimeError("the weighted sequence never reached the target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    people, judge, error_sd = pool()
    print(f"pool {people.size} items, rho {np.corrcoef(people, judge)[0, 1]:.3f}, ±{TARGET} at 95%, {runs} runs each")
    for tau in (1.0, 0.5, 0.3):
        q = (1 - tau) * error_sd / error_sd.sum() + tau / people.size
        results = [weighted_run(people, judge, q, seed) for seed in range(runs)]
        print(f"by confidence, weighted sequence with replacement, τ = {tau}: new items "
              f"{np.mean([r[0] for r in results]):.1f}, draws {np.mean([r[1] for r in results]):.1f}, "
              f"covered {np.mean([r[2] for r in results]):.2f}")
    orders = [np.random.default_rng(seed).permutation(people.size) for seed in range(runs)]
    uniform = [confidence_sequence(people[order], judge[order], judge, BOUNDS, ALPHA, T_STAR,
                                   min_labels=1).first_within(TARGET) for order in orders]
    print(f"uniform, the campaign's sequence without replacement: new items {np.mean(uniform):.1f}")


if __name__ == "__main__":
    main()
