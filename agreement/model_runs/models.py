"""The model registry, the embedding cache, model runs (split into chunks) and their item-level predictions.

A model's *identity* is a digest over what decides its outputs (backend, weights' file hash or the
endpoint's model id and revision, the classical metric), never over its display name: the embedding cache
is keyed by (identity, sha256 of the text), so renaming a model keeps its cache and two tasks sharing
texts encode them once. The cache keeps a slice of vectors per row (EmbeddingSlice, embedding_store.py).

A run is split into chunks of items. Any worker claims a chunk with one conditional UPDATE (queued, or
running with an expired lease), embeds the chunk's texts that are not cached yet, and marks it done; the
worker that finishes the last chunk claims the scoring the same way. A killed worker leaves a chunk whose
lease runs out: the next worker re-claims it, and everything its predecessor stored stays cached.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.llm.models import SpendCapped, validate_endpoint_url, validate_env_name
from hume.jobs.models import Job
from hume.roles import is_admin
from tasks_app.models import Item, Task

CLASSICAL_METRICS = ("levenshtein", "rouge", "jaccard", "bm25", "tfidf")


class EmbeddingModel(SpendCapped):
    """A row in the registry: an encoder (local folder or /v1/embeddings endpoint) or a classical metric."""

    class Backend(models.TextChoices):
        SENTENCE_TRANSFORMERS = "sentence-transformers", "sentence-transformers folder"
        OPENAI = "openai", "OpenAI-compatible /v1/embeddings"
        CLASSICAL = "classical", "classical similarity metric"

    name = models.CharField(max_length=200, unique=True, help_text="Shown in reports, e.g. all-MiniLM-L6-v2.")
    backend = models.CharField(max_length=32, choices=Backend.choices)
    path = models.CharField(max_length=1000, blank=True,
                            help_text="sentence-transformers: the model folder (empty: the model shipped with HUME).")
    shipped = models.BooleanField(default=False, help_text="The MiniLM shipped as a Python package.")
    base_url = models.CharField(max_length=500, blank=True, validators=[validate_endpoint_url],
                                help_text="openai: base URL; requests go to <base_url>/embeddings.")
    model_id = models.CharField(max_length=200, blank=True, help_text="openai: the model name sent in requests.")
    api_key_env = models.CharField(max_length=100, blank=True, validators=[validate_env_name],
                                   help_text="openai: name of the environment variable holding the key.")
    metric = models.CharField(max_length=16, blank=True, choices=[(m, m) for m in CLASSICAL_METRICS])
    revision = models.CharField(max_length=200, blank=True,
                                help_text="Weights' file hash (folders), the endpoint model's revision, or the "
                                          "library version (classical metrics).")
    dimensions = models.PositiveIntegerField(null=True, blank=True)
    batch_size = models.PositiveIntegerField(default=32, validators=[MinValueValidator(1)])
    max_retries = models.PositiveSmallIntegerField(default=4)
    timeout_seconds = models.FloatField(default=60.0, validators=[MinValueValidator(0.1)])
    mteb_name = models.CharField(max_length=200, blank=True,
                                 help_text="The same model's name in MTEB results (org/name).")
    researchers_may_run = models.BooleanField(
        null=True, blank=True,
        help_text="Researchers may start runs of this model (admins always may). Left empty, it is set from the "
                  "backend when saved: on for local folders and classical metrics, off for remote endpoints, "
                  "which may cost money per request.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(batch_size__gte=1), name="model_batch_size_positive"),
            models.CheckConstraint(
                condition=~Q(backend="classical") | Q(metric__in=CLASSICAL_METRICS), name="classical_model_has_metric"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.backend})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.researchers_may_run is None:
            self.researchers_may_run = default_researchers_may_run(self.backend)
        super().save(*args, **kwargs)

    @property
    def is_encoder(self) -> bool:
        return self.backend != self.Backend.CLASSICAL

    @property
    def identity(self) -> str:
        """What decides the outputs, digested: the cache key's first half."""
        parts = {"backend": self.backend, "revision": self.revision, "metric": self.metric,
                 "base_url": self.base_url.rstrip("/"), "model_id": self.model_id}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def clean(self) -> None:
        if self.backend == self.Backend.OPENAI and not (self.base_url and self.model_id):
            raise ValidationError("An openai model needs a base URL and a model id.")
        if self.backend == self.Backend.CLASSICAL and self.metric not in CLASSICAL_METRICS:
            raise ValidationError(f"A classical model needs a metric: one of {', '.join(CLASSICAL_METRICS)}.")
        if self.backend == self.Backend.SENTENCE_TRANSFORMERS and not (self.path or self.shipped):
            raise ValidationError("A sentence-transformers model needs a folder (or the shipped model).")
        if self.backend == self.Backend.SENTENCE_TRANSFORMERS and self.path and not self.shipped:
            self.clean_path()

    def clean_path(self) -> None:
        """The folder must be inside a MODEL_DIRS root and hold a model (agreement/model_runs/folders.py); it is
        stored resolved, so what a worker loads is what was checked."""
        from agreement.model_runs.folders import BackendError, check_model_folder, inside_roots

        try:
            self.path = str(check_model_folder(inside_roots(self.path)))
        except BackendError as exc:
            raise ValidationError({"path": str(exc)}) from None

    def describe(self) -> dict[str, Any]:
        """What reports and the API show: the identity, never a key or a machine path."""
        return {"name": self.name, "backend": self.backend, "metric": self.metric or None,
                "model_id": self.model_id or None, "revision": self.revision, "dimensions": self.dimensions,
                "identity": self.identity[:16], "mteb_name": self.mteb_name or None}


def default_researchers_may_run(backend: str) -> bool:
    """The switch's default (issue 23): a remote endpoint may be paid per request, so only an admin starts it
    until an admin turns the switch on; a local folder or a classical metric costs only the workers' time."""
    return backend != EmbeddingModel.Backend.OPENAI


class NotAllowedToRun(PermissionError):
    """A researcher asked to start a model whose "researchers may run" switch is off."""


def check_may_run(user: Any, models: Any) -> None:
    """The one check before any run starts from a page, the API, SAGE or retrieval: admins may start every
    model, researchers only those with the switch on. NotAllowedToRun names the models refused."""
    if is_admin(user):
        return
    refused = [m.name for m in models if not m.researchers_may_run]
    if refused:
        raise NotAllowedToRun(f"only an admin may start {', '.join(refused)} (its 'researchers may run' switch "
                              "is off)")


class EmbeddingSlice(models.Model):
    """The embedding cache, one row per slice a model encoded (agreement/model_runs/embedding_store.py): the
    vectors packed as one array, the sha256 digests of their texts packed in the same order. Never changed once
    written; deleted by model (`prune_embedding_cache`)."""

    model_identity = models.CharField(max_length=64, db_index=True)
    dtype = models.CharField(max_length=8, help_text="float32 or float16, as the model gave the vectors.")
    dimensions = models.PositiveIntegerField()
    n_vectors = models.PositiveIntegerField()
    digests = models.BinaryField(help_text="sha256 of each text, 32 bytes each, in the vectors' order.")
    vectors = models.BinaryField(help_text="n_vectors × dimensions values of dtype, little-endian, row after row.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.model_identity[:12]}: {self.n_vectors} vectors"


class ModelRun(Job):
    """One model over one task's items: its chunks, its scores against gold and humans, its predictions.

    A job of the job layer in its vocabulary: queued while its chunks (jobs themselves) embed, running while a
    worker holds its scoring step under the lease, then done or failed. `stage` says which, in words."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="model_runs")
    model = models.ForeignKey(EmbeddingModel, on_delete=models.CASCADE, related_name="runs")
    inputs_digest = models.CharField(max_length=64,
                                     help_text="Digest of items, gold and human answers read, and the protocol.")
    protocol = models.CharField(max_length=16, default="mteb",
                                help_text="How it is scored: mteb (MTEB's own protocol, every kind), or pooled "
                                          "(classification: cross-validation without undersampling, pooled).")
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    texts_encoded = models.PositiveIntegerField(default=0, help_text="Texts sent to the model (cache misses).")
    device = models.CharField(max_length=100, blank=True,
                              help_text="Where it was computed: cpu, cuda:0, mps, remote (an endpoint); several, "
                                        "comma-separated, when workers on different devices shared its chunks.")
    scores = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["task", "model", "inputs_digest"], name="model_run_once")]

    def __str__(self) -> str:
        return f"{self.model.name} on {self.task.name} ({self.status})"

    @property
    def stage(self) -> str:
        """What the run is doing, in words: "embedding" (its chunks; a classical metric has nothing to embed and
        waits as "queued"), "scoring" (a worker holds it), "done" or "failed"."""
        if self.status == self.Status.QUEUED:
            return "embedding" if self.model.is_encoder else "queued"
        return "scoring" if self.status == self.Status.RUNNING else self.status

    @property
    def progress(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return int(90 * self.chunks_done / self.chunks_total) if self.chunks_total else 0


class RunChunk(Job):
    """A slice of a run's items that one worker embeds: a job of the job layer (hume/jobs/), claimed atomically,
    its lease renewed while it embeds, re-claimable once a dead worker's lease lapses."""

    run = models.ForeignKey(ModelRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    item_ids = models.JSONField()
    encoded = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="run_chunk_index")]

    def __str__(self) -> str:
        return f"run {self.run_id} chunk {self.index} ({self.status})"


class Prediction(models.Model):
    """A model's item-level output: similarities, predicted label/choice/partition, per the task's kind."""

    run = models.ForeignKey(ModelRun, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="model_predictions")
    value = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="prediction_once")]

    def __str__(self) -> str:
        return f"run {self.run_id} item {self.item_id}"
