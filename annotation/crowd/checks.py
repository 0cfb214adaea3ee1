"""Quality checks of crowd participants, as pure functions: does an answer match what a check expects, when
is a check due, is a run of answers straight-lining, how often does a participant agree with the consensus,
and what to do with a participant (approve, reject, ask to return).

No Django here, so each rule reads (and is tested) alone; annotation/crowd/studies.py applies them.

Which failures justify a rejection follows Prolific's policy on attention and comprehension checks
(docs/crowd.md, "Checks and Prolific's rules"): only *fair* checks count, i.e. instructed-response attention
checks, and a rejection is suggested only after at least two of them failed. Hidden gold, speed and
straight-lining are signals for the researcher to review, never grounds on their own. A participant who fails
the comprehension (practice) items is asked to return the study instead, and is never suggested for rejection.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kinds.kind_registry import get_kind

FAIR_FAILURES_TO_REJECT = 2
# A number in a gold or attention answer matches within this share of the task's scale (an STS slider rarely
# lands on the exact gold 3.2; a tenth of the 0–5 scale is 0.5).
NUMBER_TOLERANCE_SHARE = 0.1


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _partition(labels: Sequence[Any]) -> list[int]:
    """A clustering answer up to renaming of its clusters: each text's cluster as the order of first use."""
    first: dict[str, int] = {}
    return [first.setdefault(canonical(label), len(first)) for label in labels]


def answer_matches(kind: str, value: Any, expected: Any, *, tolerance: float = 0.0) -> bool:
    """Whether `value` is the answer `expected`: equal, numbers within `tolerance`, clusterings as partitions."""
    if get_kind(kind).answers_are_partitions and isinstance(value, list) and isinstance(expected, list):
        return len(value) == len(expected) and _partition(value) == _partition(expected)
    return _close(value, expected, tolerance)


def _close(value: Any, expected: Any, tolerance: float) -> bool:
    if isinstance(value, bool) or isinstance(expected, bool):
        return value == expected
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)):
        return abs(float(value) - float(expected)) <= tolerance + 1e-9
    if isinstance(value, list) and isinstance(expected, list):
        return len(value) == len(expected) and all(
            _close(a, b, tolerance) for a, b in zip(value, expected, strict=True))
    if isinstance(value, dict) and isinstance(expected, dict):
        return value.keys() == expected.keys() and all(_close(value[k], expected[k], tolerance) for k in value)
    return canonical(value) == canonical(expected)


def scale_tolerance(scale: tuple[float | None, float | None, float | None]) -> float:
    """NUMBER_TOLERANCE_SHARE of the task's scale (0 for kinds without one)."""
    lo, hi, _ = scale
    return 0.0 if lo is None or hi is None else NUMBER_TOLERANCE_SHARE * (hi - lo)


def attention_due(n_work: int, n_done: int, n_available: int, quota: int) -> bool:
    """Whether the next attention check is due after `n_work` work answers: the A available checks are spread
    evenly over the quota, the j-th (0-based) due after floor((j + 1) · quota / (A + 1)) work items."""
    if n_done >= n_available:
        return False
    return n_work >= (n_done + 1) * quota // (n_available + 1)


def gold_due(n_work: int, n_done: int, rate: float) -> bool:
    """Whether a hidden gold check is due: one per 1/rate work items (rate 0.1: after the 10th, 20th, …)."""
    return rate > 0 and n_done < int(n_work * rate + 1e-9)


def n_gold_checks(quota: int, rate: float, n_gold: int) -> int:
    """How many hidden gold checks a participant who does the whole quota sees: checks come between work items,
    so `gold_due` is asked after 0 … quota − 1 answers (at most one per gold item of the pool)."""
    return min(int(max(quota - 1, 0) * rate + 1e-9), n_gold) if rate > 0 else 0


def n_checks_planned(quota: int, n_attention: int, gold_rate: float, n_gold: int) -> int:
    """The check items of a whole run: every attention check (`attention_due` spreads them inside the quota)
    and the hidden gold checks. The item counter adds these to the quota, so a check is counted as an item
    like any other and does not repeat the number of the item before it."""
    return n_attention + n_gold_checks(quota, gold_rate, n_gold)


def straightline_run(values: Sequence[Any]) -> int:
    """How many of the latest answers (newest last) equal the newest one in a row."""
    if not values:
        return 0
    last, run = canonical(values[-1]), 0
    for value in reversed(values):
        if canonical(value) != last:
            break
        run += 1
    return run


def consensus_agreement(own: Mapping[Any, Any], others: Mapping[Any, Sequence[Any]],
                        match: Callable[[Any, Any], bool]) -> tuple[float | None, int]:
    """Share of the participant's items where their answer matches the consensus of the other annotators (the
    most common answer; an item whose top answers tie, or without another answer, is left out), and how many
    items were compared. None when no item could be compared."""
    compared = agreed = 0
    for item, value in own.items():
        counts = Counter(canonical(v) for v in others.get(item, ()))
        top = counts.most_common(2)
        if not top or (len(top) == 2 and top[0][1] == top[1][1]):
            continue
        compared += 1
        agreed += match(value, json.loads(top[0][0]))
    return (agreed / compared if compared else None), compared


def suggestion(*, stage: str, returned_reason: str, fair_failures: int, enough_work: bool = True) -> str:
    """approve, reject, return or wait, with Prolific's rule: reject only after FAIR_FAILURES_TO_REJECT failed
    fair checks; a comprehension failure asks the participant to return (never a rejection). Approval needs a
    completed run with `enough_work` (the answers the completion code needs): a run that ended without them, a
    skipped-through or a full study, is never approved."""
    if returned_reason == "comprehension":
        return "return"
    if fair_failures >= FAIR_FAILURES_TO_REJECT:
        return "reject"
    if stage == "completed" and enough_work:
        return "approve"
    return "return" if stage in ("returned", "completed") else "wait"
