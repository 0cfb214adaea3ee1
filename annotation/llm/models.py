"""LLM annotators: endpoint configuration, runs, the request log, and judge panels.

An LLM annotator is an ordinary `Annotator` whose agent is "llm" (a user with an unusable password) plus an
`LLMAnnotatorConfig` saying which OpenAI-compatible endpoint answers for it. Its answers are ordinary
`Annotation` rows, so every report scores them exactly like a human's.

The request log (`LLMRequest`) is what makes runs idempotent: one row per (annotator, request key), the key
a hash of (model, prompt version, item uid). A worker claims the row before calling the API, so a re-run,
a redelivered task or a second worker never pays for the same answer twice.

The API key is never readable back: prefer `api_key_env` (the *name* of an environment variable on the
worker); the `api_key_secret` field is write-only in forms and serializers and `serialize=False`, so
`dumpdata` and every serializer-based export leave it out.

Foreign keys name `"annotation.Annotator"` and `"annotation.Batch"` as strings: annotation/models.py imports
this module (Django looks for an app's models there), so importing annotation.models back would be a cycle.
"""
from __future__ import annotations

import os
import re
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from hume.jobs import models as job_models
from hume.jobs.models import Job
from hume.lib import endpoint_policy
from tasks_app.core.kinds import content_digest
from tasks_app.models import Item, Task

ENV_NAME_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]*_API_KEY$")
# The longest client timeout of one request: an hour (a slow reasoning model answers in minutes). 1e308 was
# accepted and meant no deadline at all (issue 35, item 8).
MAX_TIMEOUT_SECONDS = 3600.0


def validate_endpoint_url(value: str) -> None:
    """The shared endpoint policy (hume/lib/endpoint_policy.py): plain http(s), no credentials, query or
    fragment (the URL is shown on pages and in logs), and a host that leads to a public address."""
    try:
        endpoint_policy.check_url(value)
    except endpoint_policy.EndpointRefused as exc:
        raise ValidationError(str(exc)) from None


def validate_env_name(value: str) -> None:
    """Only *_API_KEY names: an admin must not be able to send DATABASE_URL or SECRET_KEY to an endpoint."""
    if value and not ENV_NAME_PATTERN.match(value):
        raise ValidationError(
            "Name an environment variable ending in _API_KEY (upper case), e.g. OPENAI_API_KEY."
        )


class MissingAPIKey(RuntimeError):
    """The configured environment variable is not set where the run executes."""


class SpendCapped(models.Model):
    """The spend cap of a remote endpoint (docs/llm.md, "Spend caps"), shared by LLM annotators and embedding
    models: every request takes one from the budget with a conditional UPDATE, so the cap holds across workers."""

    max_requests = models.PositiveIntegerField(
        null=True, blank=True, help_text="Spend cap: the most HTTP requests (retries included) sent to this endpoint "
                                         "while the cap is set, by all runs together; empty: no cap. A run that "
                                         "reaches it stops with the reason (docs/llm.md, \"Spend caps\").")
    requests_sent = models.PositiveBigIntegerField(
        default=0, help_text="HTTP requests counted against max_requests; set it back to 0 to start a new budget.")

    class Meta:
        abstract = True


class LLMAnnotatorConfig(SpendCapped):
    """Which chat-completions endpoint answers for an LLM annotator, and how hard it may be pushed."""

    annotator = models.OneToOneField(
        "annotation.Annotator", on_delete=models.CASCADE, related_name="llm_config", limit_choices_to={"agent": "llm"}
    )
    base_url = models.CharField(
        max_length=500, validators=[validate_endpoint_url],
        help_text="OpenAI-compatible base URL; requests go to <base_url>/chat/completions.",
    )
    model = models.CharField(max_length=200, help_text="Model name sent in each request.")
    api_key_env = models.CharField(
        max_length=100, blank=True, validators=[validate_env_name],
        help_text="Preferred: name of the environment variable holding the key on the worker, e.g. OPENAI_API_KEY.",
    )
    api_key_secret = models.CharField(
        max_length=500, blank=True, serialize=False,
        help_text="Alternative to the environment variable; write-only, never shown or exported.",
    )
    temperature = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)])
    max_tokens = models.PositiveIntegerField(null=True, blank=True, validators=[MinValueValidator(1)],
                                             help_text="Empty: the server's default.")
    json_mode = models.BooleanField(
        default=True, help_text='Send response_format {"type": "json_object"} (turn off if the server rejects it).'
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(1024)],
        help_text="Requests in flight at once (the study ran its judges at up to 1,024).")
    requests_per_minute = models.PositiveIntegerField(default=60, validators=[MinValueValidator(1)])
    timeout_seconds = models.FloatField(
        default=60.0, validators=[MinValueValidator(0.1), MaxValueValidator(MAX_TIMEOUT_SECONDS)],
        help_text="Client timeout of one HTTP request (at most an hour).")
    max_retries = models.PositiveSmallIntegerField(default=4, validators=[MaxValueValidator(10)],
                                                   help_text="Retries on 429, 5xx and timeouts.")
    max_answer_retries = models.PositiveSmallIntegerField(
        default=2, validators=[MaxValueValidator(5)],
        help_text="Re-asks after a malformed or invalid answer before recording a failure.")
    logprobs = models.BooleanField(
        default=False,
        help_text="Ask for token log-probabilities (logprobs: true); each answer's confidence is then the probability "
                  "of its tokens (docs/escalation.md). Turn on only if the server supports it.")
    confidence_samples = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(10)],
        help_text="K simulated annotators: where the reply has no log-probs, ask K more times, each with few-shot "
                  "examples from a different human annotator (pairwise: also with A and B swapped); the confidence "
                  "is the share of the answers equal to the stored one. 0: no confidence without log-probs.")
    price_per_1k_input = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, validators=[MinValueValidator(0)],
        help_text="Optional: price per 1,000 prompt tokens, for the cost figure beside the token counts.")
    price_per_1k_output = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, validators=[MinValueValidator(0)],
        help_text="Optional: price per 1,000 completion tokens.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "LLM annotator configuration"
        constraints = (
            models.CheckConstraint(condition=Q(temperature__gte=0) & Q(temperature__lte=2), name="llm_temperature_0_2"),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1) & Q(max_concurrency__lte=1024), name="llm_concurrency_1_1024"
            ),
            models.CheckConstraint(condition=Q(requests_per_minute__gte=1), name="llm_rpm_positive"),
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="llm_timeout_positive"),
            models.CheckConstraint(condition=Q(timeout_seconds__lte=MAX_TIMEOUT_SECONDS), name="llm_timeout_bounded"),
            models.CheckConstraint(condition=Q(max_retries__lte=10), name="llm_max_retries_bounded"),
            models.CheckConstraint(condition=Q(max_answer_retries__lte=5), name="llm_answer_retries_bounded"),
            models.CheckConstraint(condition=Q(confidence_samples__lte=10), name="llm_confidence_samples_bounded"),
        )

    def __str__(self) -> str:
        return f"{self.annotator.name} ({self.model})"

    @property
    def has_secret(self) -> bool:
        return bool(self.api_key_secret)

    def key_source(self) -> str:
        """What pages may say about the key: where it comes from, never what it is."""
        if self.api_key_env:
            return f"environment variable {self.api_key_env}"
        return "stored secret" if self.api_key_secret else "none (the endpoint needs no key)"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """What the tokens cost at the configured prices (rounded to 1/10,000); None when no price is set."""
        if self.price_per_1k_input is None and self.price_per_1k_output is None:
            return None
        total = (Decimal(prompt_tokens) * (self.price_per_1k_input or 0)
                 + Decimal(completion_tokens) * (self.price_per_1k_output or 0)) / 1000
        return total.quantize(Decimal("0.0001"))

    def resolve_api_key(self) -> str | None:
        """The key to send, read at request time on the worker; the environment variable wins."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise MissingAPIKey(f"the environment variable {self.api_key_env} is not set on the worker")
            return value
        return self.api_key_secret or None


class LLMRun(Job):
    """One LLM annotator answering a batch (or a whole task's pool): a job of the job layer (hume/jobs/).

    Its status is the layer's (queued, running, done, failed, cancelled); a worker claims it, keeps its lease
    while it asks (annotation/llm/run_executor.py), and every request row it claims carries the lease's token
    (`LLMRequest.claimed_by`), so a worker that lost the run writes none of them. `paused` is an admin's hold,
    not a status: a paused run keeps its status (queued, or running while its requests in flight finish) and
    no worker claims it until it is resumed."""

    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="llm_runs")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="llm_runs")
    batch = models.ForeignKey("annotation.Batch", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="llm_runs")
    model = models.CharField(max_length=200, help_text="The model at the time the run was created.")
    prompt_version = models.CharField(max_length=64)
    retry_failed = models.BooleanField(default=False, help_text="Ask again for items that failed before.")
    paused = models.BooleanField(default=False, help_text="An admin paused it: no worker claims it until resumed.")
    total_items = models.PositiveIntegerField(default=0)
    http_requests = models.PositiveIntegerField(default=0, help_text="HTTP requests this run sent (retries included).")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    ACTIVE = job_models.ACTIVE

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = (models.Index(fields=["annotator", "status"]),)

    def __str__(self) -> str:
        scope = self.batch.name if self.batch_id and self.batch else self.task.name
        return f"run {self.pk}: {self.annotator.name} on {scope}"

    @property
    def cost(self) -> Decimal | None:
        """The run's tokens at its annotator's configured prices (None when none are set)."""
        config = LLMAnnotatorConfig.objects.filter(annotator_id=self.annotator_id).first()
        return config.cost(self.prompt_tokens, self.completion_tokens) if config else None

    @property
    def is_finished(self) -> bool:
        return self.status in job_models.FINISHED

    @property
    def state(self) -> str:
        """What pages say: the status, or "paused" for a held run that has not finished."""
        return "paused" if self.paused and self.status in job_models.ACTIVE else self.status


def request_key(model: str, prompt_version: str, item_uid: str) -> str:
    """The deterministic id of one paid request: same model, prompt and item → same key, on any worker."""
    return content_digest("llm-request", model, prompt_version, item_uid)


class LLMRequest(models.Model):
    """The request log: one row per answer bought (or attempted), claimed before the API is called."""

    class Status(models.TextChoices):
        CLAIMED = "claimed", "claimed (in flight)"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="llm_requests")
    request_key = models.CharField(max_length=64)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="llm_requests")
    run = models.ForeignKey(LLMRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="requests")
    model = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CLAIMED)
    # A child claim of the run's lease: the claim token of the run that holds it (hume/jobs/lease.py). It is
    # live while that run is running under an unexpired lease; the holder writes it only inside `fenced()`.
    claimed_by = models.UUIDField(null=True, blank=True)
    claimed_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="HTTP requests sent for this answer.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    answer = models.JSONField(null=True, blank=True, help_text="The validated answer stored as the annotation.")
    reasoning = models.TextField(blank=True)
    raw_outputs = models.JSONField(default=list, blank=True, help_text="Every raw reply, kept for inspection.")
    failure_kind = models.CharField(max_length=16, blank=True, help_text="malformed, http or timeout.")
    error = models.TextField(blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True, help_text="The answer's confidence in [0, 1], if known.")

    class Meta:
        ordering = ("claimed_at", "id")
        constraints = (
            models.UniqueConstraint(fields=["annotator", "request_key"], name="llm_request_once_per_key"),
            models.CheckConstraint(
                condition=~Q(status="succeeded") | Q(answer__isnull=False), name="llm_request_success_has_answer"
            ),
        )
        indexes = (models.Index(fields=["run", "status"]), models.Index(fields=["annotator", "item"]))

    def __str__(self) -> str:
        return f"{self.annotator.name} on {self.item_id}: {self.status}"


class LLMJudgePanel(models.Model):
    """Several LLM judges on one task, compared with each other and averaged into a "mean of judges".

    The mean is itself an llm Annotator (`mean_annotator`, no endpoint) whose annotations are the
    per-item (per-document) mean of the judges' answers, recomputed on demand.
    """

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="llm_panels")
    name = models.CharField(max_length=100)
    judges = models.ManyToManyField("annotation.Annotator", related_name="llm_panels",
                                    limit_choices_to={"agent": "llm"})
    mean_annotator = models.OneToOneField(
        "annotation.Annotator", null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_mean_of"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    mean_computed_at = models.DateTimeField(null=True, blank=True)
    agreement = models.JSONField(null=True, blank=True, help_text="Agreement between the judges, when last computed.")
    agreement_computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("task", "name")
        constraints = (models.UniqueConstraint(fields=["task", "name"], name="llm_panel_name_unique_per_task"),)

    def __str__(self) -> str:
        return f"{self.name} ({self.task.name})"


__all__ = [
    "LLMAnnotatorConfig",
    "LLMJudgePanel",
    "LLMRequest",
    "LLMRun",
    "MissingAPIKey",
    "request_key",
    "validate_endpoint_url",
    "validate_env_name",
]
