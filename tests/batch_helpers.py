"""Small builders shared by the batch and assignment tests: a classification task with n items and a batch."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from annotation.core.batches import BatchSpec, create_batch
from annotation.models import Annotator, Batch
from tasks_app.models import Item, ItemGold, Task

LABELS = ["positive", "negative"]


def make_task(name: str = "SentimentEng", n: int = 6, language: str = "eng-Latn", mteb: str = "",
              sample: Iterable[int] | None = None) -> Task:
    """A classification task whose items carry gold, so tests can check gold never leaks."""
    sample = set(sample) if sample is not None else None
    task = Task.objects.create(name=name, kind="classification", language=language, labels=LABELS,
                               mteb_task_name=mteb, sample_size=len(sample) if sample is not None else None)
    for i in range(n):
        item = Item.objects.create(task=task, uid=f"{name}-{i}", external_id=str(i), position=i,
                                   payload={"text": f"{name} text {i}"},
                                   in_sample=sample is not None and i in sample)
        ItemGold.objects.create(item=item, value="GOLD-" + LABELS[i % 2])
    return task


def make_batch(task: Task, annotators: Iterable[Annotator] = (), overlap: int = 1, hold_seconds: int = 900,
               name: str | None = None, language: str | None = None, override_reason: str = "") -> Batch:
    spec = BatchSpec(task=task, overlap=overlap, hold_seconds=hold_seconds, name=name, language=language)
    batch, _ = create_batch(spec, annotators=annotators, override_reason=override_reason)
    return batch


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """The default PBKDF2 hasher costs about a second per test user on this machine; what we test is not it.
    tests/settings.py now sets the same hasher for the whole suite; this stays for the modules that import it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
