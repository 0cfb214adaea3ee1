"""One browser per run (issue 35, item 1; docs/crowd.md, "One browser per run"): a platform id is not a secret, so
a browser without the run's secret that arrives with a known id never sees the code, the answers or a form that
writes, and cannot act as the participant; an admin moves a real participant to a new device (the study page's
button or `release_participant`), and the release is kept and logged.

The attacker is a plain HTTP client with no cookies against the live server on PostgreSQL, as in the probe that
found it: before the fix its arrival got the victim's completion page with the code, and "Continue here" a tab
that revised the victim's answers."""
from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
import requests
from django.core.cache import caches
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from annotation.crowd.models import DeviceRelease, Participant
from annotation.models import Annotation, AnnotationRevision
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.conftest import PASSWORD, require_postgres
from tests.crowd_helpers import Person, arrival_url, make_crowd_task, make_study, pid

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 100_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def victim_study(quota: int = 2):
    return make_study(make_crowd_task(n=6, attention=0, practice=0), consent="", quota=quota)


def finished(link, n: int) -> Person:
    """A participant who answered the quota (each answer "positive") and holds the completion page."""
    person = Person(link, n)
    person.start()
    while person.item_on_screen() is not None:
        person.answer("positive")
    assert person.participant.stage == Participant.Stage.COMPLETED
    return person


def refused_everything(page: str) -> None:
    """What a browser without the run's secret must never get: the code, a tab, an item, a form that writes."""
    assert "C0DE42" not in page and 'id="completion-code"' not in page
    assert 'name="tab"' not in page and 'name="item"' not in page and "<form" not in page


def test_a_browser_without_the_runs_secret_never_sees_the_code_nor_revises_the_victims_answers(live_server):
    require_postgres()
    link = victim_study()
    victim = finished(link, 1)
    answers = dict(Annotation.objects.filter(annotator=victim.participant.annotator).values_list("item_id", "value"))
    attacker = requests.Session()  # no cookies; knows the victim's platform ids (they are no secret)
    arrival = attacker.get(live_server.url + arrival_url(link, 1), timeout=30)
    assert arrival.status_code == 409 and "already started the study in another browser" in arrival.text
    assert "message the researcher" in arrival.text
    refused_everything(arrival.text)
    # a minute later (the victim's tab quiet), and straight to the pages: still nothing
    Participant.objects.filter(link=link).update(tab_seen_at=timezone.now() - timedelta(minutes=5))
    assert attacker.get(live_server.url + arrival_url(link, 1), timeout=30).status_code == 409
    run = f"{live_server.url}/study/{link.token}/run/"
    for page in (attacker.get(run, timeout=30), attacker.get(run, params={"revise": next(iter(answers))}, timeout=30)):
        assert page.status_code == 403
        refused_everything(page.text)
    # the same requests from a client that skips CSRF (the server's own refusal, not the CSRF token's)
    forger = Client()
    forger.get(arrival_url(link, 1))
    taken = forger.post(f"/study/{link.token}/take-over/", follow=True)  # "Continue here"
    assert taken.status_code == 403
    refused_everything(taken.content.decode())
    for item_id in answers:
        revised = forger.post(f"/study/{link.token}/run/", {"tab": victim.tab, "action": "revise", "item": item_id,
                                                              "label": "negative"})
        assert revised.status_code == 403
    assert dict(Annotation.objects.filter(annotator=victim.participant.annotator)
                .values_list("item_id", "value")) == answers
    assert not AnnotationRevision.objects.exists()
    # the victim's own browser is untouched: the code, and the way back to revise
    mine = victim.client.get(arrival_url(link, 1), follow=True).content.decode()
    assert 'id="completion-code">C0DE42<' in mine and 'id="revise-after"' in mine


def test_an_arrival_with_a_running_participants_id_takes_nothing_over(live_server):
    require_postgres()
    link = victim_study(quota=3)
    victim = Person(link, 2)
    victim.start()
    victim.answer("positive")
    participant = victim.participant
    on_screen = victim.item_on_screen()
    Participant.objects.filter(pk=participant.pk).update(tab_seen_at=timezone.now() - timedelta(minutes=5))
    attacker = requests.Session()
    page = attacker.get(live_server.url + arrival_url(link, 2), timeout=30)
    assert page.status_code == 409
    refused_everything(page.text)
    after = Participant.objects.get(pk=participant.pk)
    assert (after.tab, after.platform_session_id) == (participant.tab, participant.platform_session_id)
    assert victim.answer("negative").status_code == 200  # the victim's tab still holds the run
    assert Annotation.objects.get(annotator=participant.annotator, item_id=on_screen).value == "negative"
    # a new participant id from the attacker's browser is its own run, as before
    own = attacker.get(live_server.url + arrival_url(link, 3), timeout=30)
    assert own.status_code == 200 and 'name="tab"' in own.text
    assert Participant.objects.filter(link=link).count() == 2


def test_the_secret_is_stored_hashed_and_a_session_holding_another_participant_gets_nothing():
    link = victim_study()
    first, second = Person(link, 4), Person(link, 5)
    first.start()
    second.start()
    stored = first.participant.browser_secret_hash
    session = first.client.session[f"crowd:{link.pk}"]
    assert re.fullmatch(r"[0-9a-f]{64}", stored) and session["secret"] not in stored
    assert session["participant"] == first.participant.pk
    # the first browser arrives with the second's id: refused, and its own run stays its own
    assert first.client.get(arrival_url(link, 5)).status_code == 409
    assert first.client.session[f"crowd:{link.pk}"] == session
    # a session that names the second participant with the first's secret acts as no one
    forged = first.client.session
    forged[f"crowd:{link.pk}"] = {"participant": second.participant.pk, "secret": session["secret"]}
    forged.save()
    assert first.client.get(f"/study/{link.token}/run/").status_code == 403


def test_an_admin_moves_a_participant_to_a_new_device_with_a_reason_kept_and_logged(carol, dave, caplog):
    link = victim_study()
    victim = finished(link, 6)
    participant = victim.participant
    admin = Client()
    admin.login(username=carol.username, password=PASSWORD)
    page = admin.get(f"/manage/studies/{link.pk}/").content.decode()
    release_url = f"/manage/studies/{link.pk}/participants/{participant.pk}/release/"
    assert f'action="{release_url}"' in page
    researcher = Client()
    researcher.login(username=dave.username, password=PASSWORD)
    assert researcher.post(release_url, {"reason": "asked"}).status_code == 403  # admins only, as exclusion
    assert f'action="{release_url}"' not in researcher.get(f"/manage/studies/{link.pk}/").content.decode()
    for empty in (" ", "\x00"):  # a NUL alone is no reason (and PostgreSQL refuses it in text)
        no_reason = admin.post(release_url, {"reason": empty}, follow=True)
        assert no_reason.status_code == 200 and "Give a reason" in no_reason.content.decode()
    assert not DeviceRelease.objects.exists()
    with caplog.at_level(logging.WARNING, logger="annotation.crowd.identity"):
        done = admin.post(release_url, {"reason": "Prolific message: laptop broke"}, follow=True).content.decode()
    assert "may continue on a new device" in done
    release = DeviceRelease.objects.get()
    assert (release.participant_id, release.by, release.reason) == (participant.pk, carol,
                                                                     "Prolific message: laptop broke")
    assert f"participant {participant.pk} of study {link.pk} released" in caplog.text and carol.username in caplog.text
    # the old browser stops; the next arrival with the id continues the run (here: the code); the one after not
    assert victim.client.get(f"/study/{link.token}/run/").status_code == 403
    new_device = Person(link, 6)
    assert 'id="completion-code">C0DE42<' in new_device.arrive().content.decode()
    assert Person(link, 6).arrive().status_code == 409
    assert Participant.objects.filter(link=link).count() == 1  # the same participant, not a new one


def test_the_release_command_moves_a_participant_and_names_what_is_wrong(capsys):
    link = victim_study(quota=3)
    victim = Person(link, 7)
    victim.start()
    victim.answer("positive")
    with pytest.raises(CommandError, match="no participant"):
        call_command("release_participant", str(link.pk), pid(99), reason="x")
    with pytest.raises(CommandError, match="--reason: a release needs a reason"):
        call_command("release_participant", str(link.pk), pid(7), reason=" ")
    call_command("release_participant", str(link.pk), pid(7), reason="new phone")
    assert "may continue on a new device" in capsys.readouterr().out
    assert DeviceRelease.objects.get().by is None  # the command line
    phone = Person(link, 7)
    page = phone.arrive().content.decode()
    assert "Item 2 of 3" in page  # where the participant was, in the new browser
    assert phone.answer("negative").status_code == 200
    assert victim.page().status_code == 403
