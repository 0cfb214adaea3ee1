"""The parts of a kind that agreement uses (each kind provides them in its folder, kinds/<name>/), checked for
every kind by tasks_app/kind_parts.py.

A kind's scorer class (scorer.py, agreement/core/scoring.py `SCORERS`) computes its metrics, its charts and its MTEB
agreement block and declares the rest; its model evaluation (evaluation.py) says how models run here are
scored on it, compared with the humans by its paired test."""
from __future__ import annotations

from agreement.core.scoring import SCORERS
from agreement.model_runs.evaluate import EVALUATIONS
from tasks_app.kind_parts import Check


def _declares(attribute: str) -> Check:
    return lambda kind: kind in SCORERS and hasattr(SCORERS[kind], attribute)


PARTS: dict[str, Check] = {
    "scorer": lambda kind: kind in SCORERS,
    "main agreement metric": _declares("main_agreement"),
    "MTEB score keys": _declares("mteb_score_keys"),
    "judge agreement": _declares("judge_agreement"),
    "model evaluation": lambda kind: kind in EVALUATIONS and hasattr(EVALUATIONS[kind], "main_metric"),
}
