"""agreement's parts of each task kind, checked for every kind by tasks_app/kind_parts.py.

A kind's scorer class (agreement/scoring.py `KINDS`) computes its metrics and declares the rest."""
from __future__ import annotations

from agreement.scoring import KINDS as SCORERS
from tasks_app.kind_parts import Check


def _declares(attribute: str) -> Check:
    return lambda kind: kind in SCORERS and hasattr(SCORERS[kind], attribute)


PARTS: dict[str, Check] = {
    "scorer": lambda kind: kind in SCORERS,
    "main agreement metric": _declares("main_agreement"),
    "MTEB score keys": _declares("mteb_score_keys"),
    "judge agreement": _declares("judge_agreement"),
}
