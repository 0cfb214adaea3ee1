"""Crowd studies: a public study link on a batch, the participants who arrive through it, and their checks.

Registered from annotation/models.py (Django reads an app's models from there). A participant is an ordinary
human Annotator (made by `create_annotator`, no password, so it can never log in) on the link's batch, plus
the platform's ids, its stage in the study and its deadline; the engine (annotation/core/assignment.py) hands out
and stores its work items as anyone else's, so overlap k means the same thing. Check items (attention,
hidden gold, practice) are answered here, in CheckResult, never as Annotations: they are not part of the
batch and never reach a report.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class StudyLink(models.Model):
    """An unguessable public link to one batch: who may arrive, how many items each does, in how long."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        GENERIC = "generic", "other platform"

    token = models.CharField(max_length=64, unique=True)
    batch = models.ForeignKey("annotation.Batch", on_delete=models.CASCADE, related_name="study_links")
    platform = models.CharField(max_length=16, choices=Platform.choices, default=Platform.GENERIC)
    quota = models.PositiveIntegerField(help_text="Work items per participant.")
    minutes = models.PositiveIntegerField(help_text="Time limit from arrival.")
    completion_code = models.CharField(max_length=64)
    consent = models.TextField(blank=True, help_text="Markdown; rendered safely. Empty: no consent step.")
    gold_rate = models.FloatField(default=0.0, help_text="Hidden gold checks per work item (0 = none).")
    min_seconds = models.PositiveIntegerField(default=0, help_text="Minimum seconds per item (0 = no check).")
    straightline_run = models.PositiveIntegerField(
        default=0, help_text="Flag this many identical answers in a row (0 = no check).")
    practice_failures_allowed = models.PositiveIntegerField(
        default=1, help_text="Practice items a participant may fail before being asked to return.")
    min_answers = models.PositiveIntegerField(
        default=0, help_text="Answered work items that earn the completion code when the batch runs out of items "
                             "for a participant before the quota (0 = the quota itself).")
    is_open = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(quota__gte=1), name="study_quota_at_least_one"),
            models.CheckConstraint(condition=Q(minutes__gte=1), name="study_minutes_at_least_one"),
            models.CheckConstraint(condition=Q(gold_rate__gte=0.0, gold_rate__lte=1.0), name="study_gold_rate_unit"),
        ]

    def __str__(self) -> str:
        return f"study link {self.pk} on batch {self.batch_id}"

    @property
    def answers_for_code(self) -> int:
        """The fewest answered work items that earn the completion code: the quota, or the stated minimum."""
        return self.min_answers or self.quota

    @property
    def return_url(self) -> str:
        """Where the completion page sends the participant (Prolific's completion URL with the code)."""
        if self.platform == self.Platform.PROLIFIC:
            return f"https://app.prolific.com/submissions/complete?cc={self.completion_code}"
        return ""


class Participant(models.Model):
    """One platform participant in one study: an annotator that exists for this study link alone."""

    class Stage(models.TextChoices):
        CONSENT = "consent", "consent"
        INSTRUCTIONS = "instructions", "instructions"
        PRACTICE = "practice", "practice"
        WORK = "work", "work"
        COMPLETED = "completed", "completed"
        RETURNED = "returned", "returned"  # left, declined consent, failed comprehension, or timed out

    link = models.ForeignKey(StudyLink, on_delete=models.CASCADE, related_name="participants")
    annotator = models.OneToOneField("annotation.Annotator", on_delete=models.CASCADE, related_name="participant")
    # The batch the participant works in: the link's when they arrived. A link that follows a campaign's batches
    # moves on (`studies.follow_batch`); a participant moves with it once their batch has nothing left for them
    # (`studies.move_on`). Empty (runs from before this field): the link's batch.
    batch = models.ForeignKey("annotation.Batch", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    platform_id = models.CharField(max_length=64, help_text="PROLIFIC_PID or the `participant` parameter.")
    platform_study_id = models.CharField(max_length=64, blank=True)
    platform_session_id = models.CharField(max_length=64, blank=True)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.CONSENT)
    returned_reason = models.CharField(
        max_length=32, blank=True,
        help_text="declined, left, timed_out, comprehension, excluded, full (no item left for them before the answers "
                  "the code needs, none skipped), too_few_answers (the same after skips)")
    # sha256 (hex) of the secret kept in the session of the browser that started the run (annotation/crowd/
    # identity.py); empty: not bound, the next arrival with this platform id binds it (after an admin's release)
    browser_secret_hash = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField()
    deadline = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    tab = models.CharField(max_length=64, blank=True, help_text="The one browser tab allowed to act.")
    tab_seen_at = models.DateTimeField(null=True, blank=True)
    practice_done = models.PositiveIntegerField(default=0)
    practice_failed = models.PositiveIntegerField(default=0)
    check_item = models.ForeignKey("tasks_app.Item", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", help_text="The check item on screen, if any.")
    check_role = models.CharField(max_length=16, blank=True)

    class Meta:
        ordering = ["link", "started_at"]
        constraints = [models.UniqueConstraint(fields=["link", "platform_id"], name="participant_once_per_study")]
        indexes = [models.Index(fields=["stage", "deadline"])]

    def __str__(self) -> str:
        return f"participant {self.pk} of study {self.link_id}"


class DeviceRelease(models.Model):
    """An admin let a participant continue on another device: their run was unbound from the browser that held
    it, and the next arrival with their platform id takes it over (docs/crowd.md, "One browser per run")."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="releases")
    reason = models.CharField(max_length=500)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                           related_name="+", help_text="Empty: the command line.")
    at = models.DateTimeField()

    class Meta:
        ordering = ["participant", "at", "pk"]

    def __str__(self) -> str:
        return f"participant {self.participant_id} released at {self.at:%Y-%m-%d %H:%M}"


class CheckResult(models.Model):
    """One quality check of a participant: an answered check item, or a flag raised on their work."""

    class Role(models.TextChoices):
        ATTENTION = "attention", "attention check"
        GOLD = "gold", "hidden gold check"
        PRACTICE = "practice", "practice (comprehension)"
        SPEED = "speed", "too fast"
        STRAIGHTLINE = "straightline", "straight-lining"

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="checks")
    item = models.ForeignKey("tasks_app.Item", on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=16, choices=Role.choices)
    value = models.JSONField(null=True, blank=True)
    passed = models.BooleanField()
    # A check item the participant skipped or flagged without answering: not passed, and not failed either
    # (Prolific counts only failed fair checks toward a rejection; docs/crowd.md, "Checks and Prolific's rules").
    unanswered = models.BooleanField(default=False)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    note = models.CharField(max_length=2100, blank=True,
                            help_text="The participant's skip reason or flag comment on a check item they skipped.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant", "created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["participant", "item", "role"], name="check_once_per_item")]

    def __str__(self) -> str:
        outcome = "passed" if self.passed else "not answered" if self.unanswered else "failed"
        return f"{self.role} of participant {self.participant_id}: {outcome}"


class ExclusionEvent(models.Model):
    """One exclusion of an annotator, or its undoing, with who, when and why: the history behind
    Annotator.excluded_at (which holds only the current state)."""

    class Action(models.TextChoices):
        EXCLUDE = "exclude", "excluded"
        INCLUDE = "include", "included again"

    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="exclusion_events")
    action = models.CharField(max_length=8, choices=Action.choices)
    reason = models.CharField(max_length=500)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                           related_name="+", help_text="Empty: the command line.")
    at = models.DateTimeField()
    was_active = models.BooleanField(default=True, help_text="Whether the annotator was active before an exclusion.")
    n_items_over_k = models.PositiveIntegerField(
        default=0, help_text="Re-inclusion: items that now hold more than k included answers (all are kept).")

    class Meta:
        ordering = ["annotator", "at", "pk"]

    def __str__(self) -> str:
        return f"{self.annotator_id} {self.get_action_display()} at {self.at:%Y-%m-%d %H:%M}"
