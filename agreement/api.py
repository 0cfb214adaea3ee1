"""JSON API of reports (under /api/v1/reports/): read stored reports, ask for a run. Researchers only.

Reading never computes: a task without a stored report answers 404 with its status, and POSTing to
`compute/` queues a run (202; with the broker down still 202, queued, with `error` saying so; never computed inline).
"""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from agreement.core.report_exports import PART_KEYS, TOP_KEYS, ordered
from agreement.core.reports import ReportQueueError, request_report
from agreement.models import Report
from hume.roles import IsResearcher
from tasks_app.models import Task

STATE_FIELDS = ("status", "stage", "progress", "error", "requested_at", "started_at", "finished_at",
                "computed_at", "computed_in", "answers_digest", "inputs_digest", "attempts", "computations")


class StateSerializer(serializers.Serializer):
    """A report's job state (documents the responses; the views build plain dicts)."""

    task_id = serializers.IntegerField()
    task = serializers.CharField()
    status = serializers.CharField(help_text="queued, running, done, failed or 'not computed'")
    stage = serializers.CharField(allow_null=True)
    progress = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    requested_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    computed_in = serializers.CharField(allow_null=True)
    answers_digest = serializers.CharField(allow_null=True)
    inputs_digest = serializers.CharField(allow_null=True)
    attempts = serializers.IntegerField(allow_null=True)
    computations = serializers.IntegerField(allow_null=True)


def state(task: Task, report: Report | None) -> dict[str, Any]:
    values = {name: getattr(report, name) if report else None for name in STATE_FIELDS}
    if report is None:
        values["status"] = "not computed"
    return {"task_id": task.pk, "task": task.name, **values}


@extend_schema(responses=StateSerializer(many=True))
@api_view(["GET"])
@permission_classes([IsAuthenticated & IsResearcher])
def report_list(request: Request) -> Response:
    """Every task's report state (without the report documents)."""
    reports = {r.task_id: r for r in Report.objects.defer("result")}
    return Response([state(task, reports.get(task.pk)) for task in Task.objects.all()])


@extend_schema(responses={200: inline_serializer("ReportDocument", {"state": StateSerializer(),
                                                                    "report": serializers.JSONField()}),
                          404: inline_serializer("NoReport", {"state": StateSerializer(),
                                                              "report": serializers.JSONField(allow_null=True)})})
@api_view(["GET"])
@permission_classes([IsAuthenticated & IsResearcher])
def report_detail(request: Request, task_id: int) -> Response:
    """The stored report document (keys in docs/reports.md) with the job state."""
    task = get_object_or_404(Task, pk=task_id)
    report = Report.objects.filter(task=task).first()
    if report is None or report.result is None:
        return Response({"state": state(task, report), "report": None}, status=status.HTTP_404_NOT_FOUND)
    return Response({"state": state(task, report), "report": ordered(report.result, TOP_KEYS + PART_KEYS)})


@extend_schema(request=None, responses={202: StateSerializer})
@api_view(["POST"])
@permission_classes([IsAuthenticated & IsResearcher])
def compute(request: Request, task_id: int) -> Response:
    """Queue a report run: 202 with its state; with the broker unreachable also 202, queued, with `error`
    saying the broker is down (the job layer sends the run when it is back)."""
    task = get_object_or_404(Task, pk=task_id)
    try:
        report = request_report(task.pk)
    except ReportQueueError as exc:
        body = state(task, Report.objects.filter(task=task).first()) | {"error": str(exc)}
        return Response(body, status=status.HTTP_202_ACCEPTED)
    return Response(state(task, report), status=status.HTTP_202_ACCEPTED)
