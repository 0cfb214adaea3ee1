"""Imported model results (MTEB TaskResult format): who was evaluated, which run, and each subset's score.

Three tables mirror MTEB's results layout ``<org__model>/<revision>/<Task>.json``:

* :class:`ResultModel` — an embedding model, or a human reference (HUME's ``baseline/Human``).
* :class:`ResultRevision` — one revision folder of it. Every imported revision is kept; exactly one
  per model is *current* (the rule of ``mteb_files.current_revisions``, unless an admin pinned
  another). A human reference's ``annotator_<id>`` folders are revisions with ``annotator_id`` set:
  single annotators, whose scores give the annotator range, never current and never a leaderboard row.
* :class:`ResultScore` — one (task, split, subset) main score with every numeric metric, as imported.

The database holds the invariants: one revision name per model, one score per (revision, task, split,
subset) — so a re-import updates rather than duplicates — and at most one current revision per model.
"""
from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from django.utils import timezone

from measures.results.mteb_files import ScoreRow


class ResultModel(models.Model):
    """A model (or a human reference) that MTEB results were imported for, e.g. ``intfloat/e5-mistral-7b``."""

    class Agent(models.TextChoices):  # what produced the scores (docs/style.md, "Naming")
        MODEL = "model", "model"
        HUMAN_REFERENCE = "human_reference", "human reference"

    name = models.CharField(max_length=300, unique=True, help_text="As in model_meta.json, e.g. org/model.")
    agent = models.CharField(max_length=20, choices=Agent.choices, default=Agent.MODEL)
    meta = models.JSONField(default=dict, blank=True, help_text="A few fields of model_meta.json.")
    current_pinned = models.BooleanField(
        default=False, help_text="An admin chose the current revision; imports leave that choice alone."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_human_reference(self) -> bool:
        return self.agent == self.Agent.HUMAN_REFERENCE


class ResultRevision(models.Model):
    """One revision folder of a model's results; ``annotator_id`` marks a single human annotator's scores."""

    model = models.ForeignKey(ResultModel, on_delete=models.CASCADE, related_name="revisions")
    revision = models.CharField(max_length=200)
    annotator_id = models.CharField(
        max_length=200, blank=True, help_text="Set for a human reference's annotator_<id> folder."
    )
    is_current = models.BooleanField(default=False)
    n_subsets = models.PositiveIntegerField(default=0, help_text="Task subsets in the split comparisons use.")
    mteb_version = models.CharField(max_length=50, blank=True, help_text="Newest MTEB version among its files.")
    imported_at = models.DateTimeField(default=timezone.now, help_text="Last import that touched it.")

    class Meta:
        ordering = ["model__name", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["model", "revision"], name="result_revision_once_per_model"),
            models.UniqueConstraint(
                fields=["model"], condition=Q(is_current=True), name="result_one_current_revision_per_model"
            ),
            models.CheckConstraint(
                condition=Q(is_current=False) | Q(annotator_id=""), name="result_annotator_revision_never_current"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model.name}@{self.revision}"


class ResultScore(models.Model):
    """One subset's score in one revision, on MTEB's 0–1 scale, with the file it came from."""

    revision = models.ForeignKey(ResultRevision, on_delete=models.CASCADE, related_name="scores")
    mteb_task_name = models.CharField(max_length=200)
    split = models.CharField(max_length=100)
    hf_subset = models.CharField(max_length=100)
    languages = models.JSONField(default=list, help_text="Normalised: nor-Latn is stored as nob-Latn.")
    main_score = models.FloatField()
    metrics = models.JSONField(default=dict, blank=True, help_text="Every finite numeric metric of the subset.")
    agreement = models.JSONField(null=True, blank=True, help_text="Human results: the agreement block.")
    dataset_revision = models.CharField(max_length=200, blank=True)
    mteb_version = models.CharField(max_length=50, blank=True)
    source_path = models.CharField(max_length=1000, blank=True)

    class Meta:
        ordering = ["revision", "mteb_task_name", "split", "hf_subset"]
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "mteb_task_name", "split", "hf_subset"], name="result_score_once_per_subset"
            ),
        ]
        indexes = [models.Index(fields=["mteb_task_name"])]

    def __str__(self) -> str:
        return f"{self.revision}: {self.mteb_task_name}/{self.split}/{self.hf_subset} = {self.main_score:.4f}"


def stored_rows(**filters: Any) -> list[ScoreRow]:
    """Stored scores as the parser's ``ScoreRow`` (one query), so the same pure rules apply to the DB.

    ``filters`` narrow ``ResultScore`` (e.g. ``revision__model=model``). The rows carry the revision's
    name; callers that need database ids join them by (model name, revision).
    """
    fields = ("revision__model__name", "revision__model__agent", "revision__revision", "revision__annotator_id",
              "mteb_task_name", "split", "hf_subset", "languages", "main_score", "metrics", "dataset_revision",
              "mteb_version", "source_path", "agreement")
    queryset = ResultScore.objects.filter(**filters).order_by("pk").values_list(*fields)
    return [
        ScoreRow(model_name=name, revision=revision, is_human_reference=agent == ResultModel.Agent.HUMAN_REFERENCE,
                 annotator_id=annotator or None, mteb_task_name=task, split=split, hf_subset=subset,
                 languages=list(languages), main_score=score, metrics=metrics, dataset_revision=dataset,
                 mteb_version=version or None, source_path=source, agreement=agreement)
        for (name, agent, revision, annotator, task, split, subset, languages, score, metrics, dataset, version,
             source, agreement) in queryset
    ]
