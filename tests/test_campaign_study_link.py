"""A campaign whose people are a crowd study link (agreement/campaigns/study_links.py, docs/campaigns.md "A study
link as the people"): participants driven through the crowd pages until the campaign stops itself at its target;
a participant who finds the batch dry gets the next batch's items at once, their quota counted over both; the
refusals; and participants at once through the live server on PostgreSQL (k never exceeded, no answer lost)."""
from __future__ import annotations

import json
import re
import threading
from collections import Counter

import numpy as np
import pytest
import requests
from django.contrib.auth.models import User
from django.core.cache import caches
from django.core.management import call_command
from django.db import connections
from django.test import Client
from rest_framework.test import APIClient

from agreement.campaigns import reviewing
from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status, status_text
from agreement.campaigns.models import Campaign
from agreement.campaigns.starting import start_campaign
from agreement.campaigns.study_links import StudyLinkWanted
from annotation.crowd.models import Participant, StudyLink
from annotation.models import Annotation, Batch
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.campaign_app import JUDGE, sts_study
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, arrival_url, make_study

CROWD = StudyLinkWanted(quota=15, minutes=60, completion_code="CAMP34", platform=StudyLink.Platform.PROLIFIC)


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 100_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def truth_by_pk(task, truth: dict[str, float]) -> dict[int, float]:
    return {pk: truth[external_id] for pk, external_id in task.items.values_list("pk", "external_id")}


def work(person: Person, values: dict[int, float]) -> list[int]:
    """Arrive, pass the instructions, answer every item shown with its true value until the run ends."""
    return person.answer_until_done(lambda item: {"score": values[item]})


def start_and_answer(person: Person, n: int, values: dict[int, float]) -> None:
    """Arrive, pass the instructions and answer the next `n` items shown with their true values."""
    person.arrive()
    person.post(action="instructions")
    for _ in range(n):
        item = person.item_on_screen()
        person.post(action="answer", item=item, score=values[item], shown="")


@pytest.mark.django_db
def test_participants_through_the_link_drive_the_campaign_until_it_stops_itself_at_its_target(capsys):
    task, truth = sts_study("STS crowd", n_items=300)
    values = truth_by_pk(task, truth)
    call_command("campaign", "start", "crowd-sts", "--task", task.name, "--judge", JUDGE, "--target-half-width",
                 "0.3", "--study-link", "--study-quota", "15", "--completion-code", "CAMP34", "--prolific",
                 "--seed", "1", "--format", "json")
    started = json.loads(capsys.readouterr().out)
    campaign = Campaign.objects.get(name="crowd-sts")
    link = campaign.study_link
    assert started["study_link"] == {"id": link.pk, "url": f"/study/{link.token}/", "platform": "prolific",
                                     "quota": 15, "minutes": 60, "open": True, "participants": 0, "completed": 0,
                                     "returned": 0, "answers": 0}
    assert started["people"] == [] and link.batch_id == started["batches"][0]["id"]
    arrivals = 0
    while Campaign.objects.get(pk=campaign.pk).state == Campaign.State.COLLECTING and arrivals < 20:
        arrivals += 1
        person = Person(link, arrivals)
        answered = work(person, values)
        reviewing.review_campaign(campaign.pk)  # the worker's debounced review, called here
        finished = person.participant
        # no one who arrived while the campaign collected was turned away: the quota, or the code for what they did
        assert finished.stage == Participant.Stage.COMPLETED, (arrivals, finished.returned_reason)
        assert len(answered) == 15 or Campaign.objects.get(pk=campaign.pk).state == Campaign.State.DONE
        assert 'id="completion-code"' in person.page().content.decode()
    campaign.refresh_from_db()
    data = status(campaign)
    pool_mean = float(np.mean(list(truth.values())))
    assert (data["state"], data["reason"]) == ("done", "target reached")
    assert data["half_width"] <= 0.3 and data["ci_low"] <= pool_mean <= data["ci_high"]
    assert len(data["batches"]) >= 2 and all(not b["open"] for b in data["batches"])
    answers = Annotation.objects.filter(annotator__participant__link=link, skipped=False).count()
    assert data["study_link"]["participants"] == arrivals and data["study_link"]["answers"] == answers
    assert data["labels_received"] <= answers  # every answer is stored; the review counts the completed items
    assert "study link /study/" in status_text(data)
    late = Person(link, 99)  # the link says the campaign is done: the study is full, no code
    assert 'id="study-full"' in late.arrive().content.decode()
    assert late.participant.returned_reason == "full"


@pytest.mark.django_db
def test_a_participant_who_finds_the_batch_dry_gets_the_next_batchs_items_and_one_quota_over_both():
    """No review runs but the one the dry batch asks: the fifth participant answers batch 1's last five items,
    then batch 2's, up to their quota of 10 over both; the link now points at batch 2, where newcomers start."""
    task, truth = sts_study("STS dry", n_items=300)
    values = truth_by_pk(task, truth)
    wanted = StudyLinkWanted(quota=10, completion_code="CAMP34", platform=StudyLink.Platform.PROLIFIC)
    campaign = start_campaign("dry-sts", task, JUDGE, 0.3, seed=1, study_link=wanted)
    first = campaign.batches.get()
    assert first.batch_items.count() == 45
    for n in (1, 2, 3, 4):
        assert len(work(Person(campaign.study_link, n), values)) == 10
    fifth = Person(campaign.study_link, 5)
    answered = work(fifth, values)
    campaign.refresh_from_db()
    second = campaign.batches.exclude(pk=first.pk).get()
    per_batch = Counter(Annotation.objects.filter(annotator=fifth.participant.annotator)
                        .values_list("batch_id", flat=True))
    assert len(answered) == 10 and per_batch == {first.pk: 5, second.pk: 5}
    assert fifth.participant.stage == Participant.Stage.COMPLETED and fifth.participant.batch_id == second.pk
    assert campaign.study_link.batch_id == second.pk and campaign.state == Campaign.State.COLLECTING
    assert campaign.review["labels_used"] == 45  # the review the dry batch asked sized batch 2
    sixth = Person(campaign.study_link, 6)  # a newcomer starts in batch 2
    sixth.arrive()
    assert sixth.participant.batch_id == second.pk


@pytest.mark.django_db
def test_the_review_draws_the_next_batch_before_the_current_runs_dry_and_the_link_moves_once_it_is_dry():
    """Four participants answer 40 of batch 1's 45 items; the worker's review finds it low (5 free items, at most
    one quota of 10) and draws batch 2 ahead; newcomers still get batch 1's last items first, and the participant
    who finds it dry moves on to batch 2 in the same request, with no review run then."""
    task, truth = sts_study("STS ahead", n_items=300)
    values = truth_by_pk(task, truth)
    wanted = StudyLinkWanted(quota=10, completion_code="CAMP34", platform=StudyLink.Platform.PROLIFIC)
    campaign = start_campaign("ahead-sts", task, JUDGE, 0.3, seed=1, study_link=wanted)
    first = campaign.batches.get()
    for n in (1, 2, 3, 4):
        work(Person(campaign.study_link, n), values)
    assert "next batch 'ahead-sts · batch 2'" in reviewing.review_campaign(campaign.pk)
    second = campaign.batches.exclude(pk=first.pk).get()
    link = StudyLink.objects.get(pk=campaign.study_link_id)
    assert link.batch_id == first.pk  # drawn ahead; the link still serves batch 1
    reviewed_at = Campaign.objects.get(pk=campaign.pk).reviewed_at
    fifth = Person(link, 5)
    work(fifth, values)
    per_batch = Counter(Annotation.objects.filter(annotator=fifth.participant.annotator)
                        .values_list("batch_id", flat=True))
    assert per_batch == {first.pk: 5, second.pk: 5}
    assert StudyLink.objects.get(pk=link.pk).batch_id == second.pk
    assert Campaign.objects.get(pk=campaign.pk).reviewed_at == reviewed_at  # the move needed no review
    assert campaign.batches.count() == 2


@pytest.mark.django_db
def test_an_item_that_comes_back_to_an_older_batch_is_answered_before_the_campaign_draws_again():
    """The first participant holds batch 1's last item, the second finds batch 1 dry and batch 2 is drawn; the
    first leaves, so that item comes back to batch 1, behind the link; the third, once batch 2 is dry for them,
    is sent back to batch 1 for it (no third batch drawn for it), and it ends with its answer."""
    task, truth = sts_study("STS back", n_items=300)
    values = truth_by_pk(task, truth)
    wanted = StudyLinkWanted(quota=45, completion_code="CAMP34", platform=StudyLink.Platform.PROLIFIC)
    campaign = start_campaign("back-sts", task, JUDGE, 0.3, seed=1, study_link=wanted)
    first = campaign.batches.get()
    leaver = Person(campaign.study_link, 1)
    start_and_answer(leaver, 44, values)
    held_item = leaver.item_on_screen()  # batch 1's last item, held
    stayer = Person(campaign.study_link, 2)
    start_and_answer(stayer, 3, values)
    second = campaign.batches.exclude(pk=first.pk).get()
    leaver.post(action="leave")
    assert leaver.participant.stage == Participant.Stage.RETURNED
    assert len(work(stayer, values)) == 45 - 3 and stayer.participant.batch_id == second.pk  # their quota
    closer = Person(campaign.study_link, 3)  # batch 2's last items, then batch 1's item that came back
    closer.arrive()
    closer.post(action="instructions")
    answered = []
    while (item := closer.item_on_screen()) is not None:
        if item == held_item:
            assert campaign.batches.count() == 2  # no batch drawn while batch 1 had an item for them
        closer.post(action="answer", item=item, score=values[item], shown="")
        answered.append(item)
    assert held_item in answered and len(answered) == second.batch_items.count() - 45 + 1
    campaign.refresh_from_db()  # then dry everywhere: the review it asked ended the campaign, the code for the 10
    assert (campaign.state, campaign.reason) == ("done", "target reached")
    assert closer.participant.stage == Participant.Stage.COMPLETED
    assert 'id="completion-code"' in closer.page().content.decode()
    assert Annotation.objects.filter(item_id=held_item, annotator__participant__isnull=False).count() == 1


@pytest.mark.django_db
def test_bad_study_links_are_refused_naming_the_problem_and_write_nothing():
    task, _truth = sts_study("STS refusals", n_items=300)
    other, _ = sts_study("STS other", n_items=300)
    elsewhere = make_study(other, quota=4)
    cases = [
        (dict(study_link=StudyLinkWanted(existing=elsewhere.pk)),
         f"study_link: study link {elsewhere.pk} belongs to task 'STS other', not to the campaign's task "
         "'STS refusals'"),
        (dict(study_link=StudyLinkWanted(existing=10**6)), "study_link: no study link with id 1000000"),
        (dict(study_link=StudyLinkWanted(gold_rate=0.2)),
         "study_link gold_rate: the task “STS refusals” has no gold items to draw hidden checks from"),
        (dict(study_link=StudyLinkWanted(minutes=0, completion_code="no spaces")),
         "study_link minutes: must be between 1 and 1440, got 0; study_link completion_code: must be 1 to 64"),
        (dict(study_link=StudyLinkWanted(quota=100)),
         "study_link quota: 100 is more than the 45 items of the batch “C · batch 1”"),
        (dict(study_link=CROWD, annotators=["alice"]), "annotators: a campaign's people are either named"),
    ]
    batches = Batch.objects.count()
    for change, message in cases:
        with pytest.raises(CampaignError) as refused:
            start_campaign("C", task, JUDGE, 0.3, seed=1, **change)
        assert message in str(refused.value), (change, str(refused.value))
    assert not Campaign.objects.exists() and Batch.objects.count() == batches
    assert StudyLink.objects.get().batch.task == other


@pytest.mark.django_db
def test_the_form_and_the_api_start_a_study_link_campaign_and_the_page_shows_the_link(alice, carol):
    task, truth = sts_study("STS form", n_items=300)
    admin = Client()
    assert admin.login(username="carol", password=PASSWORD)
    response = admin.post("/campaigns/", {"name": "by-form", "task": task.name, "judge": JUDGE,
                                          "target_half_width": "0.3", "study_link": "new", "study_quota": "12",
                                          "study_minutes": "45", "completion_code": "FORM34", "overlap": "1"})
    assert response.status_code == 302, response.content.decode()[:3000]
    link = Campaign.objects.get(name="by-form").study_link
    assert (link.quota, link.minutes, link.completion_code, link.platform) == (12, 45, "FORM34", "generic")
    person_values = truth_by_pk(task, truth)
    participant = Client()  # a generic platform's participant: ?participant=ID
    page = participant.get(f"/study/{link.token}/?participant=p1", follow=True).content.decode()
    tab = re.search(r'name="tab" value="([^"]+)"', page).group(1)
    page = participant.post(f"/study/{link.token}/run/", {"tab": tab, "action": "instructions"},
                            follow=True).content.decode()
    item = int(re.search(r'name="item" value="(\d+)"', page).group(1))
    participant.post(f"/study/{link.token}/run/", {"tab": tab, "action": "answer", "item": item,
                                                  "score": person_values[item], "shown": ""})
    shown = admin.get("/campaigns/by-form/").content.decode()
    found = re.search(r'id="campaign-study-link">(.*?)</dd>', shown, re.S).group(1)
    assert f"http://testserver/study/{link.token}/" in found and "1 participant (0 completed, 0 returned), 1 answer" \
        in re.sub(r"\s+", " ", found)
    refused = admin.post("/campaigns/", {"name": "bad-form", "task": task.name, "judge": JUDGE,
                                         "target_half_width": "0.3", "study_link": "new", "study_minutes": "5000"})
    assert refused.status_code == 400 and "study_link minutes: must be between 1 and 1440, got 5000" in \
        refused.content.decode()
    api = APIClient()
    api.force_authenticate(User.objects.get(username="carol"))
    answer = api.post("/api/v1/campaigns/start/", {"name": "by-api", "task": task.name, "judge": JUDGE,
                                                   "target_half_width": 0.3, "study_link": "new", "study_quota": 9,
                                                   "platform": "prolific", "seed": 3}, format="json")
    assert answer.status_code == 201, answer.content
    data = answer.json()["study_link"]
    assert (data["quota"], data["platform"], data["participants"]) == (9, "prolific", 0)
    assert api.get("/api/v1/campaigns/by-api/").json()["study_link"]["url"] == data["url"]
    taken = api.post("/api/v1/campaigns/start/", {"name": "taken-twice", "task": task.name, "judge": JUDGE,
                                                  "target_half_width": 0.3, "study_link": str(data["id"])},
                     format="json")
    assert taken.status_code == 400 and taken.json()["detail"] == (
        f"study_link: study link {data['id']} is already the people of campaign 'by-api'")
    assert not Campaign.objects.filter(name__in=["bad-form", "taken-twice"]).exists()


def post_answers_at_once(base: str, link: StudyLink, n: int, values: dict[int, float], accepted: dict) -> None:
    """One participant's browser, as plain HTTP with its own cookies: arrive, pass the instructions, answer until
    the run ends; `accepted[n]` the items whose answer the server took (the page moved on)."""
    session = requests.Session()
    page = session.get(base + arrival_url(link, n), timeout=60).text
    accepted[n] = []
    if 'id="study-full"' in page:
        return
    tab = re.search(r'name="tab" value="([^"]+)"', page).group(1)
    run = f"{base}/study/{link.token}/run/"
    page = session.post(run, {"tab": tab, "action": "instructions", "csrfmiddlewaretoken": _csrf(session, page)},
                        timeout=60).text
    while (item := re.search(r'name="item" value="(\d+)"', page)) is not None:
        pk = int(item.group(1))
        page = session.post(run, {"tab": tab, "action": "answer", "item": pk, "score": values[pk], "shown": "",
                                  "csrfmiddlewaretoken": _csrf(session, page)}, timeout=60).text
        accepted[n].append(pk)


def _csrf(session: requests.Session, page: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    return found.group(1) if found else session.cookies.get("csrftoken", "")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_participants_at_once_never_exceed_k_and_lose_no_answer_while_the_link_follows_the_batches(live_server):
    """Twelve participants at once (threads, each its own cookies) through the live server on PostgreSQL, overlap
    2, while a reviewer draws ahead; every accepted answer is stored, no item holds more than 2 answers, and the
    link moved on to a later batch without turning anyone away while the campaign collected."""
    task, truth = sts_study("STS at once", n_items=300)
    values = truth_by_pk(task, truth)
    wanted = StudyLinkWanted(quota=8, minutes=60, completion_code="CAMP34", platform=StudyLink.Platform.PROLIFIC)
    campaign = start_campaign("at-once", task, JUDGE, 0.3, seed=2, overlap=2, study_link=wanted)
    link = campaign.study_link
    accepted: dict[int, list[int]] = {}
    stop = threading.Event()

    def participant(n: int) -> None:
        try:
            post_answers_at_once(live_server.url, link, n, values, accepted)
        finally:
            connections.close_all()

    def reviewer() -> None:
        try:
            while not stop.is_set():
                reviewing.review_campaign(campaign.pk)
                stop.wait(0.2)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=participant, args=(n,)) for n in range(1, 13)]
    review_thread = threading.Thread(target=reviewer)
    review_thread.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    stop.set()
    review_thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    stored = Counter(Annotation.objects.filter(annotator__participant__link=link, skipped=False)
                     .values_list("item_id", flat=True))
    assert max(stored.values()) <= 2  # overlap k never exceeded
    for n, items in accepted.items():  # nothing a participant submitted is lost
        mine = set(Annotation.objects.filter(annotator__participant__link=link, annotator__participant__platform_id=
                                             f"{n:024x}").values_list("item_id", flat=True))
        assert set(items) <= mine, n
    assert sum(map(len, accepted.values())) == sum(stored.values()) == 12 * 8
    campaign.refresh_from_db()
    assert not Participant.objects.filter(link=link, stage=Participant.Stage.RETURNED).exists()
    assert campaign.batches.count() == 2  # one batch drawn after the first, by the review or a dry participant
    newer = campaign.batches.order_by("-created_at").first()
    assert StudyLink.objects.get(pk=link.pk).batch_id == newer.pk
    batches_of = Counter(annotator for annotator, _batch in set(Annotation.objects.filter(
        annotator__participant__link=link).values_list("annotator_id", "batch_id")))
    assert max(batches_of.values()) == 2  # someone moved on within their run
