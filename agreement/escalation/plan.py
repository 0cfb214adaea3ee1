"""From answers to an escalation plan: human labels, agreement, the calibration split, the cascade (pure).

The steps of "Trust or Escalate" (arXiv 2407.18370) on one task, in the terms of issue 25 and
docs/escalation.md: an item's human label is the majority of its people's answers (a tie has no label and is
counted); a judge's answer is correct when it equals that label — for rating kinds when every number is within
`tolerance` of the people's mean. The calibration items are the human-labelled ones (at most `n_calibration`,
a seeded sample; the other human-labelled items are the held-out check sample, where the realised agreement of
the judges' decisions is measured). Items with a human label are never escalated; every other item is decided by
the first confident judge or escalated to people.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kinds.kind_registry import Parts
from measures.escalation.calibration import (
    MIN_COVERED,
    START_COVERED,
    JudgeThreshold,
    apply_cascade,
    calibrate_cascade,
    check_levels,
)

# Which kinds escalate, and how, as each kind's scorer declares how judges are compared (kinds/<name>/scorer.py
# `judge_agreement`): as labels (a nominal answer; reranking's whole 0/1 answer must match) or as numbers,
# agreeing within a tolerance. Clustering's partitions have no majority label, so it does not escalate. The
# scorers are the registry's, as agreement/scoring.py `SCORERS` reads them.
LABEL_KINDS = tuple(kind for kind, scorer in Parts("scorer").items()
                    if scorer.judge_agreement in ("labels", "nominal"))
RATING_KINDS = tuple(kind for kind, scorer in Parts("scorer").items()
                     if scorer.judge_agreement in ("interval", "ordinal"))
Answer = tuple[Any, float | None]  # (value, confidence)


class EscalationProblem(ValueError):
    """Input escalation cannot work with; the message says what and how to fix it."""


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def majority_label(values: Sequence[Any]) -> tuple[bool, Any]:
    """(True, the most frequent answer), or (False, None) when two answers tie for most frequent."""
    counts = Counter(_key(v) for v in values)
    (top, n_top), *rest = counts.most_common()
    if rest and rest[0][1] == n_top:
        return False, None
    return True, json.loads(top)


def mean_rating(values: Sequence[Any]) -> Any:
    """The people's mean: of numbers, or per key of {key: number} answers (keys all answers share)."""
    if isinstance(values[0], dict):
        keys = set.intersection(*(set(v) for v in values))
        return {k: float(np.mean([v[k] for v in values])) for k in sorted(keys)}
    return float(np.mean(values))


def agrees(judge_value: Any, human_label: Any, tolerance: float | None) -> bool:
    """Equality for labels; for ratings (tolerance given) every number within the tolerance of the label."""
    if tolerance is None:
        return _key(judge_value) == _key(human_label)
    if isinstance(human_label, dict):
        if not isinstance(judge_value, dict):
            return False
        return all(k in judge_value and abs(float(judge_value[k]) - v) <= tolerance for k, v in human_label.items())
    return isinstance(judge_value, int | float) and abs(float(judge_value) - human_label) <= tolerance


def human_labels(kind: str, answers: Mapping[Hashable, Sequence[Any]]) -> tuple[dict[Hashable, Any], int]:
    """Item → human label, and how many items with people's answers have none (a tied majority)."""
    labels, n_tied = {}, 0
    for item, values in answers.items():
        if not values:
            continue
        if kind in RATING_KINDS:
            labels[item] = mean_rating(values)
            continue
        clear, label = majority_label(values)
        if clear:
            labels[item] = label
        else:
            n_tied += 1
    return labels, n_tied


@dataclass(frozen=True)
class Plan:
    """What `escalate` returns: the cascade, and every item's fate."""

    result: dict[str, Any]  # the JSON the command prints (docs/escalation.md, "The command and the page")
    escalated: list[Hashable]  # the items that go to people, in the order given
    final_labels: list[tuple[Hashable, str, Any]]  # per item in order: (item, who decides, the label or None)


def escalate(kind: str, items: Sequence[Hashable], humans: Mapping[Hashable, Sequence[Any]],
             judges: Sequence[str], answers: Mapping[str, Mapping[Hashable, Answer]], alpha: float, delta: float,
             n_calibration: int | None = None, tolerance: float | None = None, seed: int = 0,
             start_covered: int = START_COVERED) -> Plan:
    """The plan for one task: `items` all its items (in order), `humans` item → people's answers, `answers`
    judge → item → (value, confidence); each judge's fixed-sequence test starts at the highest λ covering
    `start_covered` of its calibration items (calibration.py). Raises EscalationProblem on input it cannot work
    with."""
    check = _checked(kind, alpha, delta, tolerance)
    if not isinstance(start_covered, int) or start_covered < MIN_COVERED:
        raise EscalationProblem(f"--start-covered must be a whole number of at least {MIN_COVERED} calibration items, "
                                f"got {start_covered!r}")
    labels, n_tied = human_labels(kind, humans)
    labelled = [item for item in items if item in labels]
    calibration, held_out = _split(labelled, n_calibration, seed)
    if len(calibration) < MIN_COVERED:
        raise EscalationProblem(f"{len(calibration)} human-labelled calibration items; calibration needs at least "
                                f"{MIN_COVERED} (items with people's answers and a clear majority label)")

    def arrays(subset: Sequence[Hashable], judge: str) -> tuple[np.ndarray, np.ndarray]:
        given = answers.get(judge, {})
        confidence = np.array([np.nan if given.get(i, (None, None))[1] is None else given[i][1] for i in subset])
        correct = np.array([i in given and i in labels and agrees(given[i][0], labels[i], check) for i in subset])
        return confidence.astype(float), correct.astype(bool)

    calibration_arrays = [arrays(calibration, judge) for judge in judges]
    cascade = calibrate_cascade(judges, [c for c, _ in calibration_arrays], [k for _, k in calibration_arrays],
                                alpha, delta, start_covered=start_covered)
    thresholds = [fitted.threshold for fitted in cascade.judges]
    held_arrays = [arrays(held_out, judge) for judge in judges]
    held_decided = apply_cascade(thresholds, [c for c, _ in held_arrays]) if held_out else np.array([], int)
    held_right = [bool(held_arrays[j][1][n]) for n, j in enumerate(held_decided) if j >= 0]
    rest = [item for item in items if item not in labels]
    rest_decided = apply_cascade(thresholds, [arrays(rest, judge)[0] for judge in judges]) if rest else np.array([])
    escalated = [item for item, j in zip(rest, rest_decided, strict=True) if j < 0]
    fates = {item: (judges[j], answers[judges[j]][item][0]) if j >= 0 else ("escalated", None)
             for item, j in zip(rest, rest_decided, strict=True)}
    final = [(item, "people", labels[item]) if item in labels else
             (item, *fates.get(item, ("escalated", None))) for item in items]
    result = {
        "alpha": alpha, "delta": delta, "guaranteed_agreement": round(1 - alpha, 10),
        "tolerance": tolerance, "n_items": len(items), "n_items_tied": n_tied, "start_covered": start_covered,
        "judges": [judge_entry(fitted, int((rest_decided == j).sum()) if rest else 0, alpha)
                   for j, fitted in enumerate(cascade.judges)],
        "calibration": {"n_items": len(calibration), "n_covered": int((cascade.decided_by >= 0).sum()),
                        "coverage": float((cascade.decided_by >= 0).mean())},
        "check": {"n_items": len(held_out), "n_covered": len(held_right),
                  "agreement": float(np.mean(held_right)) if held_right else None},
        "rest": {"n_items": len(rest), "n_decided": len(rest) - len(escalated),
                 "coverage": (len(rest) - len(escalated)) / len(rest) if rest else None,
                 "n_escalated": len(escalated)},
    }
    return Plan(result, escalated, final)


def judge_entry(fitted: JudgeThreshold, n_decided: int, alpha: float) -> dict[str, Any]:
    """One judge of the JSON's `judges[]` (docs/escalation.md, "The command and the page"); `closest` only for a
    judge that covers nothing: where its bound came closest to passing, and about how many calibration items would
    let it pass there (`passes_below_start`: the bound already passes there, but the test stopped at a failure
    above it)."""
    shortfall = fitted.shortfall if fitted.threshold is None else None
    return {"name": fitted.judge, "threshold": fitted.threshold, "n_calibration": fitted.n_calibration,
            "n_covered": fitted.n_covered, "risk": fitted.risk, "risk_bound": fitted.risk_bound, "n_decided": n_decided,
            "start_covered": fitted.start_covered, "n_tested": fitted.n_tested,
            "closest": None if shortfall is None else {
                "threshold": shortfall.threshold, "n_covered": shortfall.n_covered, "n_errors": shortfall.n_errors,
                "risk": shortfall.risk, "risk_bound": shortfall.risk_bound,
                "n_calibration_needed": shortfall.n_calibration_needed,
                "passes_below_start": shortfall.risk_bound <= alpha}}


def _checked(kind: str, alpha: float, delta: float, tolerance: float | None) -> float | None:
    try:
        check_levels(alpha, delta)
    except ValueError as error:
        raise EscalationProblem(str(error)) from None
    if kind in RATING_KINDS:
        if tolerance is None or tolerance < 0:
            raise EscalationProblem(f"a {kind} task needs --tolerance (≥ 0): the largest difference from the "
                                    "people's mean rating that counts as agreement, e.g. 1")
        return tolerance
    if kind not in LABEL_KINDS:
        raise EscalationProblem(f"escalation works for {', '.join(LABEL_KINDS + RATING_KINDS)}; not {kind}")
    if tolerance is not None:
        raise EscalationProblem(f"--tolerance is for rating kinds; a {kind} answer agrees only when equal")
    return None


def _split(labelled: list[Hashable], n_calibration: int | None, seed: int) -> tuple[list, list]:
    """The calibration items (a seeded sample of n, in the given order) and the held-out rest."""
    if n_calibration is None or n_calibration >= len(labelled):
        return labelled, []
    if n_calibration < 1:
        raise EscalationProblem(f"--calibration must be a positive number of items, got {n_calibration}")
    chosen = set(np.random.default_rng(seed).choice(len(labelled), size=n_calibration, replace=False).tolist())
    return ([item for n, item in enumerate(labelled) if n in chosen],
            [item for n, item in enumerate(labelled) if n not in chosen])
