"""JSON API for LLM annotators, runs and judge panels (mounted at /api/v1/llm/).

Researchers read, admins write. `api_key_secret` is write-only: no response ever carries it, only
`has_secret` and `key_source` say whether and where a key is configured.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import DefaultRouter

from annotation.core.models import Annotator, Batch
from annotation.core.signals import judge_panel_refresh_requested
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel, LLMRequest, LLMRun
from annotation.llm.run_control import (
    cancel_run,
    create_llm_annotator,
    create_run,
    enqueue_run,
    is_stalled,
    pause_run,
    resume_run,
)
from annotation.llm.run_progress import run_progress
from hume.roles import IsAdmin, IsResearcher, is_researcher
from tasks_app.models import Task


class ResearchersReadAdminsWrite:
    """Viewset mixin: researchers (and admins) read, only admins write. Ids in URLs are row ids (`<id:...>`,
    hume/converters.py: beyond 64 bits is a 404, not a database error)."""

    lookup_value_converter = "id"

    def get_permissions(self) -> list[permissions.BasePermission]:
        role = IsResearcher if self.request.method in permissions.SAFE_METHODS else IsAdmin
        return [permissions.IsAuthenticated(), role()]


class LLMAnnotatorSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="annotator_id", read_only=True)
    name = serializers.CharField(source="annotator.user.username", max_length=150,
                                 validators=[UnicodeUsernameValidator()])
    api_key_secret = serializers.CharField(write_only=True, required=False, allow_blank=True, max_length=500,
                                           style={"input_type": "password"})
    has_secret = serializers.BooleanField(read_only=True)
    key_source = serializers.CharField(read_only=True)

    class Meta:
        model = LLMAnnotatorConfig
        fields = ("id", "name", "model", "base_url", "api_key_env", "api_key_secret", "has_secret", "key_source",
                  "temperature", "max_tokens", "json_mode", "max_concurrency", "requests_per_minute",
                  "timeout_seconds", "max_retries", "max_answer_retries", "logprobs", "confidence_samples",
                  "price_per_1k_input", "price_per_1k_output", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("api_key_secret") and attrs.get("api_key_env"):
            raise serializers.ValidationError({"api_key_secret": "Give either api_key_env or a secret, not both."})
        name = attrs.get("annotator", {}).get("user", {}).get("username")
        if self.instance is not None and name is not None and name != self.instance.annotator.name:
            raise serializers.ValidationError({"name": "The name of an LLM annotator cannot change."})
        if self.instance is None and name and User.objects.filter(username__iexact=name).exists():
            raise serializers.ValidationError({"name": "A user or annotator with this name exists already."})
        return attrs

    def create(self, validated_data: dict[str, Any]) -> LLMAnnotatorConfig:
        name = validated_data.pop("annotator")["user"]["username"]
        return create_llm_annotator(name, created_by=self.context["request"].user, **validated_data)

    def update(self, instance: LLMAnnotatorConfig, validated_data: dict[str, Any]) -> LLMAnnotatorConfig:
        validated_data.pop("annotator", None)
        secret = validated_data.pop("api_key_secret", None)
        for name, value in validated_data.items():
            setattr(instance, name, value)
        if secret is not None:
            instance.api_key_secret = secret
        if instance.api_key_env:
            instance.api_key_secret = ""  # the environment variable wins; do not keep a dormant secret
        instance.full_clean()
        instance.save()
        return instance


ANNOTATOR_ID = OpenApiParameter("annotator_id", OpenApiTypes.INT, OpenApiParameter.PATH,
                                description="The id of the LLM annotator.")


# The path id is the annotator's, not the config's; declared here so schema generation never queries the database.
@extend_schema_view(retrieve=extend_schema(parameters=[ANNOTATOR_ID]), update=extend_schema(parameters=[ANNOTATOR_ID]),
                    partial_update=extend_schema(parameters=[ANNOTATOR_ID]))
class LLMAnnotatorViewSet(ResearchersReadAdminsWrite, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                          mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.GenericViewSet):
    serializer_class = LLMAnnotatorSerializer
    lookup_field = "annotator_id"

    def get_queryset(self) -> QuerySet[LLMAnnotatorConfig]:
        if not is_researcher(self.request.user):
            return LLMAnnotatorConfig.objects.none()
        return LLMAnnotatorConfig.objects.select_related("annotator__user").order_by("annotator__user__username")


class LLMRunSerializer(serializers.ModelSerializer):
    annotator = serializers.PrimaryKeyRelatedField(
        queryset=Annotator.objects.filter(agent=Annotator.Agent.LLM, llm_config__isnull=False))
    annotator_name = serializers.CharField(source="annotator.name", read_only=True)
    task = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all(), required=False, allow_null=True)
    batch = serializers.PrimaryKeyRelatedField(queryset=Batch.objects.all(), required=False, allow_null=True)
    cost = serializers.DecimalField(max_digits=18, decimal_places=4, read_only=True, allow_null=True)

    class Meta:
        model = LLMRun
        fields = ("id", "annotator", "annotator_name", "task", "batch", "model", "prompt_version", "retry_failed",
                  "status", "paused", "total_items", "http_requests", "prompt_tokens", "completion_tokens", "cost",
                  "error", "attempts", "created_at", "started_at", "finished_at", "lease_expires_at")
        read_only_fields = ("model", "prompt_version", "status", "paused", "total_items", "http_requests",
                            "prompt_tokens", "completion_tokens", "error", "attempts", "created_at", "started_at",
                            "finished_at", "lease_expires_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        batch, task = attrs.get("batch"), attrs.get("task")
        if bool(batch) == bool(task):
            raise serializers.ValidationError("Give a batch or a task (exactly one).")
        return attrs

    def create(self, validated_data: dict[str, Any]) -> LLMRun:
        with transaction.atomic():
            run = create_run(validated_data["annotator"], batch=validated_data.get("batch"),
                             task=validated_data.get("task"), created_by=self.context["request"].user,
                             retry_failed=validated_data.get("retry_failed", False))
            enqueue_run(run)
        return run


class LLMRequestSerializer(serializers.ModelSerializer):
    item_external_id = serializers.CharField(source="item.external_id", read_only=True)

    class Meta:
        model = LLMRequest
        fields = ("id", "item", "item_external_id", "run", "model", "prompt_version", "request_key", "status",
                  "attempts", "prompt_tokens", "completion_tokens", "answer", "reasoning", "raw_outputs",
                  "failure_kind", "error", "http_status", "claimed_at", "finished_at", "latency_ms", "confidence")


class LLMRunViewSet(ResearchersReadAdminsWrite, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                    mixins.CreateModelMixin, viewsets.GenericViewSet):
    serializer_class = LLMRunSerializer

    def get_queryset(self) -> QuerySet[LLMRun]:
        if not is_researcher(self.request.user):
            return LLMRun.objects.none()
        return LLMRun.objects.select_related("annotator__user")

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run = self.get_object()
        progress = run_progress(run)
        data = {**self.get_serializer(run).data, "progress": {
            "total": progress.total, "answered": progress.answered, "failed": progress.failed,
            "in_flight": progress.in_flight, "done": progress.done, "percent": progress.percent},
            "stalled": is_stalled(run)}
        return Response(data)

    def _steer(self, steer: Any, name: str) -> Response:
        run = self.get_object()
        with transaction.atomic():
            changed = steer(run)
            if changed and name == "resume":
                enqueue_run(run)
        run.refresh_from_db()
        if not changed:
            return Response({"detail": f"the run is {run.state}; it cannot be {name}d now"},
                            status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(run).data)

    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        return self._steer(pause_run, "pause")

    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        return self._steer(resume_run, "resume")

    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        return self._steer(cancel_run, "cancel")

    @action(detail=True, methods=["get"], serializer_class=LLMRequestSerializer)
    def requests(self, request: Request, pk: str | None = None) -> Response:
        """The request log of this run's items (for this model and prompt version), failures with raw output."""
        run = self.get_object()
        rows = LLMRequest.objects.filter(annotator_id=run.annotator_id, model=run.model,
                                         prompt_version=run.prompt_version).select_related("item")
        if request.query_params.get("status"):
            rows = rows.filter(status=request.query_params["status"])
        page = self.paginate_queryset(rows.order_by("id"))
        return self.get_paginated_response(LLMRequestSerializer(page, many=True).data)


class LLMPanelSerializer(serializers.ModelSerializer):
    judges = serializers.PrimaryKeyRelatedField(
        many=True, queryset=Annotator.objects.filter(agent=Annotator.Agent.LLM, llm_config__isnull=False))
    mean_annotator_name = serializers.CharField(source="mean_annotator.name", read_only=True, default=None)

    class Meta:
        model = LLMJudgePanel
        fields = ("id", "task", "name", "judges", "mean_annotator", "mean_annotator_name", "mean_computed_at",
                  "agreement", "agreement_computed_at", "created_at")
        read_only_fields = ("mean_annotator", "mean_computed_at", "agreement", "agreement_computed_at", "created_at")

    def create(self, validated_data: dict[str, Any]) -> LLMJudgePanel:
        validated_data["created_by"] = self.context["request"].user
        return super().create(validated_data)


class RunScopeSerializer(serializers.Serializer):
    batch = serializers.PrimaryKeyRelatedField(queryset=Batch.objects.all(), required=False, allow_null=True)
    task = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all(), required=False, allow_null=True)
    retry_failed = serializers.BooleanField(default=False)


class LLMPanelViewSet(ResearchersReadAdminsWrite, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                      mixins.CreateModelMixin, viewsets.GenericViewSet):
    serializer_class = LLMPanelSerializer

    def get_queryset(self) -> QuerySet[LLMJudgePanel]:
        if not is_researcher(self.request.user):
            return LLMJudgePanel.objects.none()
        return LLMJudgePanel.objects.select_related("task", "mean_annotator__user").prefetch_related("judges")

    @action(detail=True, methods=["post"])
    def refresh(self, request: Request, pk: str | None = None) -> Response:
        """Recompute the mean of judges and the agreement in the worker; read the panel again for the result."""
        panel = self.get_object()
        judge_panel_refresh_requested.send(sender=LLMJudgePanel, panel_id=panel.pk)
        return Response({"detail": "recomputing"}, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"], serializer_class=RunScopeSerializer)
    def runs(self, request: Request, pk: str | None = None) -> Response:
        """Start one run per judge over a batch or the task's pool."""
        panel = self.get_object()
        scope = RunScopeSerializer(data=request.data)
        scope.is_valid(raise_exception=True)
        batch, task = scope.validated_data.get("batch"), scope.validated_data.get("task")
        if bool(batch) == bool(task) or (batch.task_id if batch else task.pk) != panel.task_id:
            return Response({"detail": "give a batch or the task of this panel (exactly one)"},
                            status=status.HTTP_400_BAD_REQUEST)
        with transaction.atomic():
            runs = [create_run(judge, batch=batch, task=task, created_by=request.user,
                               retry_failed=scope.validated_data["retry_failed"])
                    for judge in panel.judges.filter(llm_config__isnull=False)]
            for run in runs:
                enqueue_run(run)
        return Response(LLMRunSerializer(runs, many=True).data, status=status.HTTP_201_CREATED)


router = DefaultRouter(use_regex_path=False)  # path() routes: lookup_value_converter applies
router.register("annotators", LLMAnnotatorViewSet, basename="llm-annotator")
router.register("runs", LLMRunViewSet, basename="llm-run")
router.register("panels", LLMPanelViewSet, basename="llm-panel")
urlpatterns = router.urls
