"""Deterministic, stratified sampling of a task's items (HUME annotated 20–50 items per task).

The subset depends only on the seed and the items' external ids — never on database row order or ids — so
the same seed picks the same items on SQLite and PostgreSQL, and on a re-imported copy of the dataset. Where
gold has a label (classification label, pairwise preference) the sample keeps the label proportions
(largest-remainder allocation), and every label gets at least one item when the size allows, so rare classes
are not lost from a 30-item sample. Other kinds are sampled uniformly; a kind says which it is (`stratified`
in tasks_app/core/kinds.py).
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.db import transaction

from .models import Item, Task

NO_GOLD = "(no gold)"
UPDATE_CHUNK = 5000


class SamplingError(ValueError):
    pass


@dataclass(frozen=True)
class SampleResult:
    task: str
    size: int
    seed: int
    stratified: bool
    distribution: dict[str, tuple[int, int]]  # stratum → (sampled, total)

    def lines(self) -> list[str]:
        how = "stratified by gold label" if self.stratified else "uniform"
        out = [f"sampled {self.size} items of task {self.task!r} with seed {self.seed} ({how})"]
        width = max((len(s) for s in self.distribution), default=0)
        out += [f"  {s:<{width}}  {n:>5} of {total}" for s, (n, total) in self.distribution.items()]
        return out


def sample_rank(seed: int, external_id: str) -> str:
    """An item's place in the seed's random order: a hash, identical on every machine and database."""
    return hashlib.sha256(f"{seed}\x1f{external_id}".encode()).hexdigest()


def allocate(counts: dict[str, int], size: int) -> dict[str, int]:
    """Items per stratum: proportional by largest remainder (ties by stratum name), at least one each if possible."""
    total = sum(counts.values())
    size = min(size, total)
    if size == 0:
        return {s: 0 for s in counts}
    quotas = {s: Fraction(size * n, total) for s, n in counts.items()}
    shares = {s: int(q) for s, q in quotas.items()}
    by_remainder = sorted(counts, key=lambda s: (-(quotas[s] - shares[s]), s))
    for s in by_remainder[:size - sum(shares.values())]:
        shares[s] += 1
    if size >= len(counts):
        for s in sorted(counts):
            if shares[s] == 0 and counts[s] > 0:
                donor = max(sorted(shares), key=lambda d: shares[d])
                shares[donor] -= 1
                shares[s] += 1
    return shares


def choose(items: list[tuple[Any, str, str]], size: int, seed: int) -> set[Any]:
    """The keys of the chosen items; `items` holds (key, external_id, stratum) tuples."""
    strata: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for key, external_id, stratum in items:
        strata[stratum].append((sample_rank(seed, external_id), key))
    shares = allocate({s: len(members) for s, members in strata.items()}, size)
    chosen: set[Any] = set()
    for stratum, members in strata.items():
        chosen.update(key for _, key in sorted(members)[:shares[stratum]])
    return chosen


def stratum_of(task: Task, gold: Any) -> str:
    if not task.kind_definition.stratified:
        return "all items"
    return NO_GOLD if gold is None else str(gold)


@transaction.atomic
def sample_task(task: Task, size: int, seed: int) -> SampleResult:
    """Mark exactly the chosen items in_sample and record size and seed on the task, in one transaction."""
    if size < 1:
        raise SamplingError("the sample size must be at least 1")
    task = Task.objects.select_for_update().get(pk=task.pk)
    rows = [(pk, external_id, stratum_of(task, gold)) for pk, external_id, gold in
            Item.objects.filter(task=task, item_check__isnull=True)  # check items are never data (docs/import.md)
            .values_list("pk", "external_id", "gold__value")]
    if not rows:
        raise SamplingError(f"task {task.name!r} has no items to sample")
    chosen = choose(rows, size, seed)
    Item.objects.filter(task=task, in_sample=True).update(in_sample=False)
    ordered = sorted(chosen)
    for start in range(0, len(ordered), UPDATE_CHUNK):  # bounded IN lists (SQLite's variable limit)
        Item.objects.filter(pk__in=ordered[start:start + UPDATE_CHUNK]).update(in_sample=True)
    task.sample_size, task.sample_seed = len(chosen), seed
    task.save(update_fields=["sample_size", "sample_seed", "updated_at"])
    return SampleResult(task.name, len(chosen), seed, task.kind_definition.stratified, _distribution(rows, chosen))


@transaction.atomic
def clear_sample(task: Task) -> None:
    """Back to the whole task as the pool."""
    Item.objects.filter(task=task, in_sample=True).update(in_sample=False)
    task.sample_size, task.sample_seed = None, None
    task.save(update_fields=["sample_size", "sample_seed", "updated_at"])


def _distribution(rows: list[tuple[Any, str, str]], chosen: set[Any]) -> dict[str, tuple[int, int]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pk, _, stratum in rows:
        totals[stratum][0] += pk in chosen
        totals[stratum][1] += 1
    return {s: (n, total) for s, (n, total) in sorted(totals.items())}
