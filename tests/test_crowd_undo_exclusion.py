"""Undoing an exclusion (docs/crowd.md, "Exclusion"): the annotator's answers count again, toward overlap k and in
the reports; an item that reached k with others meanwhile keeps every answer and is counted as over k; the
history of exclusions and undos keeps who, when and why; the page button has the exclude button's role guard."""
from __future__ import annotations

import importlib
import re
import threading
import time
from collections import Counter

import pytest
import requests
from django.apps import apps
from django.core.cache import caches
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from agreement.core.report_building import reincluded_annotators
from agreement.models import Report
from annotation.core.annotators import create_annotator
from annotation.crowd.models import CheckResult, ExclusionEvent, Participant
from annotation.crowd.participants import exclude_annotator, include_annotator
from annotation.models import Annotation, Annotator, BatchItem, Hold
from tasks_app.models import Item, ItemGold, Task
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD, require_postgres
from tests.crowd_helpers import Person, arrival_url, make_crowd_task, make_study, pid
from tests.report_builders import cli_report, wait_for_report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def included_per_item(batch_id: int) -> Counter[int]:
    return Counter(Annotation.objects.filter(batch_id=batch_id, skipped=False, annotator__excluded_at__isnull=True)
                   .values_list("item_id", flat=True))


def answer_all(person: Person, value: str) -> list[int]:
    person.arrive()
    person.post(action="instructions")
    seen: list[int] = []
    while (item := person.item_on_screen()) is not None:
        seen.append(item)
        person.post(action="answer", item=item, label=value)
    return seen


def two_careful_one_careless():
    """k = 2 on four items: the careless participant and a careful one fill every item."""
    link = make_study(make_crowd_task(n=4, attention=0, practice=0), consent="", quota=4, overlap=2)
    careless, careful = Person(link, 1), Person(link, 2)
    assert len(answer_all(careless, "negative")) == len(answer_all(careful, "positive")) == 4
    return link, careless


def test_an_undo_counts_the_answers_again_and_keeps_every_answer_of_items_filled_meanwhile(carol):
    link, careless = two_careful_one_careless()
    annotator = careless.participant.annotator
    exclude_annotator(annotator, "answered negative to everything", by=carol)
    late = Person(link, 3)
    assert len(answer_all(late, "positive")) == 4  # the four reopened slots went to someone else
    assert set(included_per_item(link.batch_id).values()) == {2}

    inclusion = include_annotator(annotator, "the negatives were right after all")

    assert inclusion.n_items_over_k == 4  # each of their four items now holds 3 > k = 2 included answers
    assert set(included_per_item(link.batch_id).values()) == {3}
    assert set(BatchItem.objects.filter(batch=link.batch).values_list("human_answers", flat=True)) == {3}
    assert Annotation.objects.filter(batch=link.batch).count() == 12  # nothing lost
    assert answer_all(Person(link, 4), "positive") == []  # an item over k goes to no one more
    annotator.refresh_from_db()
    assert (annotator.excluded_at, annotator.excluded_reason) == (None, "")
    assert not annotator.active and careless.participant.stage == Participant.Stage.COMPLETED  # the run stays over
    history = list(ExclusionEvent.objects.filter(annotator=annotator).order_by("at", "pk")
                   .values_list("action", "reason", "by__username", "n_items_over_k"))
    assert history == [("exclude", "answered negative to everything", "carol", 0),
                       ("include", "the negatives were right after all", None, 4)]
    listed = reincluded_annotators(link.batch.task)  # what the recomputed report lists (agreement/core/reports.py)
    assert [(e["name"], e["reason"], e["n_items_over_k"]) for e in listed] == [
        (annotator.name, "the negatives were right after all", 4)]
    doc = cli_report(link.batch.task)
    assert doc["excluded_annotators"] == [] and doc["n_annotators"] == 3 and doc["n_answers"] == 12
    assert [(e["name"], e["n_items_over_k"]) for e in doc["reincluded_annotators"]] == [(annotator.name, 4)]
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    page = admin.get(f"/reports/task/{link.batch.task_id}/").content.decode()
    assert 'id="reincluded-annotators"' in page and "4 items above k, every answer kept" in page


def test_an_undo_right_after_the_exclusion_leaves_no_item_over_k():
    link, careless = two_careful_one_careless()
    annotator = careless.participant.annotator
    exclude_annotator(annotator, "by mistake")
    assert set(BatchItem.objects.filter(batch=link.batch).values_list("human_answers", flat=True)) == {1}
    assert include_annotator(annotator, "excluded the wrong person").n_items_over_k == 0
    assert set(BatchItem.objects.filter(batch=link.batch).values_list("human_answers", flat=True)) == {2}
    assert answer_all(Person(link, 3), "positive") == []  # k = 2 on every item again


def test_a_hold_on_an_item_the_undo_fills_is_dropped_so_its_holder_moves_on():
    """k = 2: the excluded spammer and a careful participant answered both items; a late participant holds the
    hold on the first when the undo lands. The item is full again, so the hold goes (answers never exceed k)
    and the late participant's answer is not stored: the page moves on (here: nothing is left) instead of
    showing the refused item again."""
    link = make_study(make_crowd_task(n=2, attention=0, practice=0), consent="", quota=2, overlap=2)
    spammer, careful = Person(link, 1), Person(link, 2)
    answer_all(spammer, "negative")
    exclude_annotator(spammer.participant.annotator, "careless")
    answer_all(careful, "positive")
    late = Person(link, 3)
    late.arrive()
    late.post(action="instructions")
    held = late.item_on_screen()
    assert held is not None and Hold.objects.filter(annotator=late.participant.annotator).count() == 1
    assert include_annotator(spammer.participant.annotator, "fine after all").n_items_over_k == 0
    assert not Hold.objects.filter(annotator=late.participant.annotator).exists()
    page = late.post(action="answer", item=held, label="positive").content.decode()
    assert 'id="study-full"' in page or "That item was already done" in page  # 0 answers: no code
    assert late.item_on_screen() is None  # nothing left for them: both items hold k included answers
    assert not Annotation.objects.filter(annotator=late.participant.annotator).exists()
    assert set(included_per_item(link.batch_id).values()) == {2}


def test_an_ordinary_annotator_gets_back_the_active_state_they_had():
    task = make_crowd_task(n=2, attention=0, practice=0)
    active, inactive = create_annotator("active-one"), create_annotator("inactive-one")
    Annotator.objects.filter(pk=inactive.pk).update(active=False)
    inactive.refresh_from_db()
    for annotator in (active, inactive):
        Annotation.objects.create(item=task.items.first(), annotator=annotator, value="positive")
        exclude_annotator(annotator, "test")
        assert not Annotator.objects.get(pk=annotator.pk).active
        include_annotator(annotator, "undo")
    assert Annotator.objects.get(pk=active.pk).active and not Annotator.objects.get(pk=inactive.pk).active


def test_an_undo_of_someone_not_excluded_or_without_a_reason_changes_nothing():
    _, careless = two_careful_one_careless()
    annotator = careless.participant.annotator
    with pytest.raises(ValueError, match="is not excluded"):
        include_annotator(annotator, "why not")
    exclude_annotator(annotator, "careless")
    with pytest.raises(ValueError, match="an undo needs a reason"):
        include_annotator(annotator, "   ")
    with pytest.raises(ValueError, match="is already excluded"):
        exclude_annotator(annotator, "twice")
    annotator.refresh_from_db()
    assert annotator.excluded_reason == "careless"
    assert list(ExclusionEvent.objects.values_list("action", flat=True)) == ["exclude"]


def test_the_command_undoes_an_exclusion_and_says_how_many_items_are_over_k(capsys):
    link, careless = two_careful_one_careless()
    name = careless.participant.annotator.name
    call_command("exclude_annotator", name, "--reason", "careless")
    answer_all(Person(link, 3), "positive")  # refills the four reopened slots
    call_command("exclude_annotator", name, "--undo", "--reason", "reviewed again")
    out = capsys.readouterr().out
    assert f"included {name} again; reports queued for 1 task(s). 4 items now hold more than k included answers" \
           in out
    with pytest.raises(CommandError, match=f"ANNOTATOR: {name} is not excluded; nothing changed."):
        call_command("exclude_annotator", name, "--undo", "--reason", "again")
    with pytest.raises(CommandError, match="--reason: say why the annotator is included again."):
        call_command("exclude_annotator", name, "--undo", "--reason", " ")
    assert [e.action for e in ExclusionEvent.objects.order_by("at", "pk")] == ["exclude", "include"]


def test_the_include_button_needs_the_exclude_buttons_role_and_the_page_keeps_the_history(carol, dave):
    link, careless = two_careful_one_careless()
    participant = careless.participant
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/exclude/", {"reason": "failed checks"})
    page = admin.get(f"/manage/studies/{link.pk}/").content.decode()
    assert "Include again</button>" in page
    researcher = Client()
    assert researcher.login(username="dave", password=PASSWORD)
    refused = researcher.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/include/", {"reason": "x"})
    assert refused.status_code == 403 and Annotator.objects.get(pk=participant.annotator_id).excluded_at is not None
    assert "Include again</button>" not in researcher.get(f"/manage/studies/{link.pk}/").content.decode()
    empty = admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/include/", {"reason": " "},
                       follow=True).content.decode()
    assert "Give a reason to include a participant again." in empty
    assert Annotator.objects.get(pk=participant.annotator_id).excluded_at is not None
    done = admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/include/",
                      {"reason": "checks were unfair"}, follow=True).content.decode()
    assert "included again; the reports recompute with their answers. No item is above k." in done
    again = admin.post(f"/manage/studies/{link.pk}/participants/{participant.pk}/include/",
                       {"reason": "twice"}, follow=True).content.decode()
    assert "is not excluded; nothing changed." in again
    history = done[done.index('id="exclusion-history"'):done.index("Flags and skips")]
    assert history.count("<tr><td>") == 2
    assert "included again" in history and "checks were unfair" in history
    assert re.search(r"<td>excluded</td>\s*<td>carol</td>", history) and "failed checks" in history
    approve = admin.get(f"/manage/studies/{link.pk}/approve.csv").content.decode().splitlines()
    assert pid(1) in approve  # completed, nothing failed, no longer excluded


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_undo_recomputes_the_report_with_the_annotator_and_drops_the_exclusion(start_worker, settings):
    settings.REPORT_DEBOUNCE_SECONDS = 1
    start_worker()
    task = Task.objects.create(name="UndoMe", kind="classification", language="eng-Latn", labels=["a", "b"])
    items = [Item.objects.create(task=task, uid=f"un-{i}", external_id=f"i{i}", position=i, payload={"text": str(i)})
             for i in range(4)]
    for item, gold in zip(items, "abab", strict=True):
        ItemGold.objects.create(item=item, value=gold)
    people = {name: create_annotator(name) for name in ("u1", "u2", "third")}
    for name, answers in (("u1", "abab"), ("u2", "abab"), ("third", "bbbb")):
        for item, value in zip(items, answers, strict=True):
            Annotation.objects.create(item=item, annotator=people[name], value=value)
    wait_for_report(task)
    exclude_annotator(people["third"], "answered b to everything")
    excluded = report_when(task, lambda doc: doc.get("excluded_annotators"))
    assert excluded["n_annotators"] == 2 and excluded["n_answers"] == 8
    assert excluded["reincluded_annotators"] == []
    include_annotator(people["third"], "b was allowed")
    after = report_when(task, lambda doc: doc.get("excluded_annotators") == [])
    assert after["n_annotators"] == 3 and after["n_answers"] == 12
    assert sorted(a["name"] for a in after["annotators"]) == ["third", "u1", "u2"]
    assert [(e["name"], e["reason"], e["n_items_over_k"]) for e in after["reincluded_annotators"]] == [
        ("third", "b was allowed", 0)]  # answers outside a batch fill no overlap slot


def report_when(task: Task, ready, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        report = Report.objects.get(task=task)
        if report.status == Report.Status.DONE and ready(report.result):
            return report.result
        assert time.monotonic() < deadline, "the report was not recomputed"
        time.sleep(0.2)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_undo_while_participants_work_at_once_loses_nothing_and_says_how_many_items_are_over_k(live_server):
    """The spammer's three answers are excluded (their items reopen); twelve participants, each a thread with
    its own cookies, work through the live server; the undo lands once the wave stored eight answers and
    refilled one of the spammer's items. Then: every answer the server took is stored, no page failed, no item
    has more than k answers besides the re-included one, exactly the items the undo counted are over k, and
    once the rest arrive every item has k, or k + 1 with the re-included answer."""
    require_postgres()
    link = make_study(make_crowd_task(n=12, attention=0, practice=0), consent="", quota=3, overlap=2,
                      hold_seconds=120)
    batch = link.batch
    spammer = Person(link, 1)
    assert len(answer_all(spammer, "negative")) == 3
    spam_items = set(Annotation.objects.filter(annotator=spammer.participant.annotator).values_list("item_id",
                                                                                                   flat=True))
    exclude_annotator(spammer.participant.annotator, "answered negative to everything")
    stored_by: dict[int, int] = {}
    undone: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(13)

    def participant(n: int) -> None:
        try:
            barrier.wait()
            stored_by[n] = work_through(live_server.url, link, n)
        except BaseException as exc:  # every error fails the test below
            errors.append(exc)

    def undo() -> None:
        try:
            barrier.wait()
            while Annotation.objects.filter(batch=batch).count() < 3 + 8 or not any(
                    included_per_item(batch.pk)[item] >= 2 for item in spam_items):  # one refilled spam item
                time.sleep(0.01)
            undone.append(include_annotator(spammer.participant.annotator, "reviewed: fine").n_items_over_k)
            undone.append(Annotation.objects.filter(batch=batch).count())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=participant, args=(n,)) for n in range(10, 22)]
    threads.append(threading.Thread(target=undo))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    n_over, at_undo = undone
    assert 3 + 8 <= at_undo < 3 + 24  # the undo landed while the wave was still answering
    stored = Counter(Annotation.objects.filter(batch=batch, skipped=False).values_list(
        "annotator__participant__platform_id", flat=True))
    for m in range(10, 22):  # every answer the server took from the wave is stored
        assert stored[pid(m)] == stored_by[m], m
    per_item = included_per_item(batch.pk)
    over = {item for item, n in per_item.items() if n > 2}
    assert n_over >= 1  # the undo landed once a spam item had its k other answers
    assert over <= spam_items and len(over) == n_over  # only the re-included answers go above k, as counted
    assert max(per_item.values()) <= 3
    n = 100
    while work_through(live_server.url, link, n) > 0:  # the rest, one after another, until nothing is left
        n += 1
    per_item = included_per_item(batch.pk)
    assert len(per_item) == 12 and all(per_item[i] == (3 if i in over else 2) for i in per_item)
    assert Annotation.objects.filter(batch=batch).count() == 12 * 2 + len(over)
    assert not Hold.objects.filter(batch_item__batch=batch).exists()


def work_through(base: str, link, n: int) -> int:
    """One participant's browser as plain HTTP with its own cookies: arrive, pass the instructions, answer until
    the completion page (an answer refused because the undo filled the item moves on to the next one). Returns
    how many answers the server stored (the page moved on without a notice)."""
    session = requests.Session()
    page = session.get(base + arrival_url(link, n), timeout=60).text
    if 'id="study-full"' in page:  # every item had its k answers: told so at arrival, no code (issue 35, item 2)
        return 0
    tab = re.search(r'name="tab" value="([^"]+)"', page).group(1)
    run = f"{base}/study/{link.token}/run/"
    page = session.post(run, {"tab": tab, "action": "instructions", "csrfmiddlewaretoken": _csrf(session, page)},
                        timeout=60).text
    stored = posts = 0
    while (item := re.search(r'name="item" value="(\d+)"', page)) is not None:
        posts += 1
        assert posts <= 2 * link.quota, page[:500]  # never the same refused item over and over
        shown = re.search(r'name="shown" value="([^"]+)"', page).group(1)
        response = session.post(run, {"tab": tab, "action": "answer", "item": item.group(1), "shown": shown,
                                      "label": "positive", "csrfmiddlewaretoken": _csrf(session, page)}, timeout=60)
        assert response.status_code < 500, response.text[:500]
        page = response.text
        stored += 'class="notice"' not in page
    # the code after the quota; a batch that ran out first says the study is full, with no code (issue 35, item 2)
    assert 'id="completion-code"' in page or 'id="study-full"' in page, page[:500]
    return stored


def _csrf(session: requests.Session, page: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    return found.group(1) if found else session.cookies.get("csrftoken", "")


def test_the_migration_marks_earlier_skipped_checks_unanswered_and_starts_each_exclusions_history():
    """annotation/migrations/0011: a check skipped or flagged before it (no value, a "skipped:" or "flagged:"
    note) becomes unanswered; an answered check with a flag note stays as judged; an annotator excluded before
    it gets the exclude event of their history."""
    backfill = importlib.import_module("annotation.migrations.0011_crowd_undo_exclusion").backfill
    link = make_study(make_crowd_task(n=4, attention=2, practice=0), consent="", quota=2)
    person = Person(link, 1)
    person.start()
    participant = person.participant
    skipped, answered = link.batch.task.items.filter(item_check__isnull=False).order_by("pk")
    CheckResult.objects.create(participant=participant, item=skipped, role="attention", value=None, passed=False,
                               note="skipped: unsure")
    CheckResult.objects.create(participant=participant, item=answered, role="attention", value="positive",
                               passed=False, note="flagged: odd")
    Annotator.objects.filter(pk=participant.annotator_id).update(excluded_at=timezone.now(), excluded_reason="old")
    backfill(apps, None)
    assert dict(CheckResult.objects.values_list("item_id", "unanswered")) == {skipped.pk: True, answered.pk: False}
    assert list(ExclusionEvent.objects.values_list("annotator_id", "action", "reason")) == [
        (participant.annotator_id, "exclude", "old")]

