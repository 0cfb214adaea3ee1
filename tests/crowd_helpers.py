"""Builders for the crowd-study tests: a classification task with gold, check items and a batch, a study link,
and a participant's client that arrives the way Prolific sends people."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.test import Client

from annotation.crowd import studies
from annotation.crowd.models import Participant, StudyLink
from tasks_app.models import Item, ItemCheck, ItemGold, Task
from tests.batch_helpers import LABELS, make_batch


def make_crowd_task(name: str = "CrowdSentiment", n: int = 8, language: str = "eng-Latn", *, attention: int = 1,
                    practice: int = 1, gold_marker: bool = False) -> Task:
    """n work items with gold (labels alternate positive, negative; with `gold_marker` the gold is "GOLD-…", a
    text no page may show), `attention` attention checks expecting "negative" and `practice` practice items
    expecting "positive"."""
    task = Task.objects.create(name=name, kind="classification", language=language, labels=LABELS,
                               instructions="Say whether the text is **positive** or negative.")
    for i in range(n):
        item = Item.objects.create(task=task, uid=f"{name}-{i}", external_id=str(i), position=i,
                                   payload={"text": f"{name} text {i}"})
        ItemGold.objects.create(item=item, value=("GOLD-" if gold_marker else "") + LABELS[i % 2])
    for j in range(attention):
        item = Item.objects.create(task=task, uid=f"{name}-a{j}", external_id=f"a{j}", position=n + j,
                                   payload={"text": f"Attention {j}: please choose negative."})
        ItemCheck.objects.create(item=item, role=ItemCheck.Role.ATTENTION, expected="negative")
    for j in range(practice):
        item = Item.objects.create(task=task, uid=f"{name}-p{j}", external_id=f"p{j}", position=n + attention + j,
                                   payload={"text": f"Practice {j}: a lovely day."})
        ItemCheck.objects.create(item=item, role=ItemCheck.Role.PRACTICE, expected="positive",
                                 feedback="A lovely day is positive.")
    return task


def make_study(task: Task | None = None, *, overlap: int = 1, hold_seconds: int = 900, **link: Any) -> StudyLink:
    task = task or make_crowd_task()
    batch = make_batch(task, overlap=overlap, hold_seconds=hold_seconds)
    wanted = {"quota": 4, "minutes": 30, "completion_code": "C0DE42", "platform": StudyLink.Platform.PROLIFIC,
              "consent": "I agree to take part. **No personal data** is kept.", **link}
    return studies.create_study_link(batch, studies.LinkSettings(**wanted))


def pid(n: int) -> str:
    """A Prolific-style id: 24 hexadecimal characters."""
    return f"{n:024x}"


def arrival_url(link: StudyLink, n: int) -> str:
    return f"/study/{link.token}/?PROLIFIC_PID={pid(n)}&STUDY_ID={'5' * 24}&SESSION_ID={n + 7:024x}"


class Person:
    """A participant's browser: a test client that arrives through the link and follows the pages."""

    def __init__(self, link: StudyLink, n: int) -> None:
        self.link, self.n, self.client, self.tab = link, n, Client(), ""

    def arrive(self) -> Any:
        response = self.client.get(arrival_url(self.link, self.n), follow=True)
        found = re.search(r'name="tab" value="([^"]+)"', response.content.decode())
        self.tab = found.group(1) if found else self.tab
        return response

    @property
    def participant(self) -> Participant:
        return Participant.objects.get(link=self.link, platform_id=pid(self.n))

    def page(self) -> Any:
        return self.client.get(f"/study/{self.link.token}/run/", {"tab": self.tab})

    def post(self, **data: Any) -> Any:
        return self.client.post(f"/study/{self.link.token}/run/", {"tab": self.tab, **data}, follow=True)

    def item_on_screen(self) -> int | None:
        found = re.search(r'name="item" value="(\d+)"', self.page().content.decode())
        return int(found.group(1)) if found else None

    def answer(self, label: str) -> Any:
        item = self.item_on_screen()
        assert item is not None, self.page().content.decode()[:2000]
        return self.post(action="answer", item=item, label=label)

    def answer_until_done(self, fields: Callable[[int], dict[str, Any]]) -> list[int]:
        """Arrive, pass the instructions and answer every item shown with `fields(item)` until the run ends; the
        items answered (an item shown twice fails: its answer was not taken)."""
        self.arrive()
        self.post(action="instructions")
        seen: list[int] = []
        while (item := self.item_on_screen()) is not None:
            assert item not in seen, f"item {item} came back: the answer was not taken"
            seen.append(item)
            self.post(action="answer", item=item, shown="", **fields(item))
        return seen

    def start(self) -> None:
        """Arrive, agree and read the instructions (up to practice or work)."""
        self.arrive()
        self.post(action="consent")
        self.post(action="instructions")
