"""Who may act as a participant: the browser that started the run, and no one else.

A platform id (Prolific's PROLIFIC_PID, another platform's `participant`) is not a secret: researchers, the
platform and anyone the participant showed a screenshot to know it. So a run is bound to the browser that
started it: the first arrival with an id makes a random secret (256 bits), keeps it in that browser's session
(server-side, under the study's key) and stores only its SHA-256 in the participant's row. Every later request
must bring the secret: an arrival with a known id and without it is refused before anything is read or written
(`AlreadyStarted`), and never sees the code, the answers or a form that writes.

A real participant who changes device (another browser, cleared cookies) asks the researcher through the
platform; an admin releases the run (`release`: the study page's button or `release_participant`), which empties
the stored hash, and the next arrival with the id binds the run to its browser (`claim`). Each release is kept
(DeviceRelease: who, when, why) and logged. SHA-256 without a salt is enough for a random 256-bit secret (no
dictionary to try); it only keeps a database reader from acting as the participant.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.crowd.models import DeviceRelease, Participant

logger = logging.getLogger(__name__)


class AlreadyStarted(Exception):
    """An arrival with the platform id of a run bound to another browser."""


def new_secret() -> tuple[str, str]:
    """A fresh browser secret and its hash (what the session keeps, what the participant's row keeps)."""
    secret = secrets.token_urlsafe(32)
    return secret, secret_hash(secret)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def holds(participant: Participant, secret: Any) -> bool:
    """Whether `secret` (from the session; anything else than a non-empty string never matches) is the one of the
    browser that holds the participant's run."""
    if not isinstance(secret, str) or not secret or not participant.browser_secret_hash:
        return False
    return hmac.compare_digest(secret_hash(secret), participant.browser_secret_hash)


def claim(participant: Participant, secret: Any) -> str:
    """The secret of this arrival's browser for `participant`: its own, when it holds the run; a new one when the
    run is not bound (after a release; one conditional UPDATE, so of two browsers arriving at once one wins).
    Raises AlreadyStarted otherwise; nothing is written then."""
    if holds(participant, secret):
        return secret
    fresh, hashed = new_secret()
    if not participant.browser_secret_hash and Participant.objects.filter(
            pk=participant.pk, browser_secret_hash="").update(browser_secret_hash=hashed, tab=""):
        participant.browser_secret_hash, participant.tab = hashed, ""
        return fresh
    raise AlreadyStarted(participant.pk)


def release(participant: Participant, reason: str, *, by: Any = None, now: datetime | None = None) -> DeviceRelease:
    """Unbind the run from the browser that holds it, so that the next arrival with the participant's platform id
    continues it (a real participant on a new device). The old browser's pages stop at once (its secret no longer
    matches). ValueError for an empty reason; nothing changes then."""
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("a release needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        Participant.objects.filter(pk=participant.pk).update(browser_secret_hash="", tab="", tab_seen_at=None)
        event = DeviceRelease.objects.create(participant=participant, reason=reason[:500], by=by, at=now)
    participant.browser_secret_hash, participant.tab, participant.tab_seen_at = "", "", None
    logger.warning("crowd: participant %s of study %s released to a new device by %s: %s", participant.pk,
                   participant.link_id, getattr(by, "username", None) or "the command line", reason[:500])
    return event
