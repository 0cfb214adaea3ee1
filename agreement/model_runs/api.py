"""JSON API of in-app models (under /api/v1/): the registry, a task's model rows, and starting runs.

Researchers read and start runs of the models whose "researchers may run" switch is on; admins start any
(202: the chunks are queued for the workers; 503 when the broker is
down, never a run inline).
"""
from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from kombu.exceptions import OperationalError as BrokerError
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.request import Request
from rest_framework.response import Response

from agreement.model_runs.evaluate import UnsupportedKind
from agreement.model_runs.execution import enqueue, start_run
from agreement.model_runs.models import EmbeddingModel, NotAllowedToRun, check_may_run
from agreement.model_runs.rows import model_rows
from hume.roles import IsResearcher
from tasks_app.models import Task


class StartSerializer(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField(), min_length=1)
    protocol = serializers.ChoiceField(choices=["mteb", "pooled"], default="mteb",
                                       help_text="mteb: MTEB's own protocol (every kind); pooled: classification "
                                                 "on whole training folds, pooled predictions (docs/models-in-app.md)")


class ModelSerializer(serializers.Serializer):
    """A registered model as the API shows it: its identity, never a key or a machine path."""

    name = serializers.CharField()
    backend = serializers.CharField()
    metric = serializers.CharField(allow_null=True)
    model_id = serializers.CharField(allow_null=True)
    revision = serializers.CharField()
    dimensions = serializers.IntegerField(allow_null=True)
    identity = serializers.CharField()
    mteb_name = serializers.CharField(allow_null=True)


class ListedModelSerializer(ModelSerializer):
    researchers_may_run = serializers.BooleanField(help_text="Researchers may start its runs (admins always may).")


class RowSerializer(serializers.Serializer):
    model = ModelSerializer()
    run_id = serializers.IntegerField()
    status = serializers.CharField()
    progress = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)
    texts_encoded = serializers.IntegerField()
    protocol = serializers.CharField(help_text="mteb (MTEB's own protocol) or pooled (classification option).")
    protocol_note = serializers.CharField(help_text="The protocol in words: folds, seed, undersampling, averaging.")
    device = serializers.CharField(allow_null=True, help_text="Where it was computed: cpu, cuda:0, mps or remote.")
    finished_at = serializers.DateTimeField(allow_null=True)
    gold = serializers.DictField(allow_null=True, help_text="Scores against gold, MTEB-style for the kind.")
    humans = serializers.DictField(allow_null=True, help_text="Scores against the humans' consensus.")
    significance = serializers.DictField(allow_null=True, help_text="Paired test humans vs model, named.")


TaskModels = inline_serializer("TaskModelRows", {"task_id": serializers.IntegerField(),
                                                 "task": serializers.CharField(), "models": RowSerializer(many=True)})
Started = inline_serializer("StartedModelRuns", {"task_id": serializers.IntegerField(),
                                                 "runs": serializers.ListField(child=serializers.DictField())})


@extend_schema(responses=ListedModelSerializer(many=True))
@api_view(["GET"])
@permission_classes([IsResearcher])
def model_list(request: Request) -> Response:
    return Response([{**m.describe(), "researchers_may_run": bool(m.researchers_may_run)}
                     for m in EmbeddingModel.objects.all()])


@extend_schema(methods=["GET"], responses=TaskModels)
@extend_schema(methods=["POST"], request=StartSerializer, responses={202: Started})
@api_view(["GET", "POST"])
@permission_classes([IsResearcher])
def task_models(request: Request, task_id: int) -> Response:
    task = get_object_or_404(Task, pk=task_id)
    if request.method == "GET":
        return Response({"task_id": task.pk, "task": task.name, "models": model_rows(task.pk)})
    body = StartSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    names = body.validated_data["models"]
    found = {m.name: m for m in EmbeddingModel.objects.filter(name__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        return Response({"models": [f"no registered model named {n!r}" for n in missing]},
                        status=status.HTTP_400_BAD_REQUEST)
    try:
        check_may_run(request.user, found.values())
    except NotAllowedToRun as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
    try:
        with transaction.atomic():
            runs = [start_run(task, found[n], protocol=body.validated_data["protocol"]) for n in names]
            for run in runs:
                enqueue(run)
    except UnsupportedKind as exc:
        return Response({"models": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    except BrokerError as exc:  # stored and queued: the job layer sends them when the broker is back
        return Response({"task_id": task.pk, "runs": [{"model": r.model.name, "run_id": r.pk, "status": r.status}
                                                       for r in runs], "detail": str(exc)},
                        status=status.HTTP_202_ACCEPTED)
    return Response({"task_id": task.pk, "runs": [{"model": r.model.name, "run_id": r.pk, "status": r.status}
                                                   for r in runs]}, status=status.HTTP_202_ACCEPTED)
