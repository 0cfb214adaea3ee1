"""Confidence-driven sampling against a uniform draw, the long version of tests/test_ppi_confidence.py (the pure
code of agreement/ppi/, no database; the studies are tests/ppi_confidence_study.py's).

For each judge (informative, uninformative, the escalation judge of issue 33) on 10,000 items, ±0.03 (people
alone need 1,067 labels): 1,000 seeded studies planned on the projection alone and 500 with the planner's
assurance margin, each labelling what its plan asks after a uniform burn-in of 100; then the half-width of 500
labels drawn by confidence and uniformly (the same estimator) against people alone, 500 studies. Prints the
labels each plan needed as a share of a people-only study's, how often the interval reached ±0.03 and covered the
mean of all 10,000 labels, and the labels equivalent at the width actually reached (labels·(reached/target)²).

Run: .venv/bin/python bench/ppi_confidence.py   (about four minutes on one core)
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.ppi.planner import DEFAULT_ASSURANCE
from tests.ppi_confidence_study import JUDGES, fixed_budget, summarise

SIZE, TARGET, LABELS = 10_000, 0.03, 500


def main() -> None:
    for kind in JUDGES:
        for studies, assurance in ((1000, 0.0), (500, DEFAULT_ASSURANCE)):
            result = summarise(kind, studies, SIZE, TARGET, seed=33, assurance=assurance)
            print(result.line(kind, TARGET, assurance))
            print(f"{'':13s} equivalent at the width reached: uniform "
                  f"{result.uniform_ratio * (result.uniform_half_width / TARGET) ** 2:.3f}, by confidence "
                  f"{result.confidence_ratio * (result.confidence_half_width / TARGET) ** 2:.3f}")
        by_confidence, uniform, people = fixed_budget(kind, 500, SIZE, LABELS, seed=34)
        print(f"{'':13s} {LABELS} labels: mean ±{by_confidence:.4f} by confidence, ±{uniform:.4f} uniform, "
              f"±{people:.4f} people alone; as a share of people-only labels: {(by_confidence / people) ** 2:.3f} / "
              f"{(uniform / people) ** 2:.3f}")


if __name__ == "__main__":
    main()
