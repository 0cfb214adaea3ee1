"""JSON API of reports (under /api/v1/reports/): read stored reports, ask for a run. Researchers only. And of
campaigns (under /api/v1/campaigns/, docs/campaigns.md): researchers read them, admins start and stop them, with the
code `manage.py campaign` runs (agreement/campaigns/).

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

from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status as campaign_status
from agreement.campaigns.models import Campaign
from agreement.campaigns.reviewing import stop_campaign
from agreement.campaigns.starting import start_campaign
from agreement.campaigns.study_links import read_wanted
from agreement.core.report_exports import PART_KEYS, TOP_KEYS, ordered
from agreement.core.reports import ReportQueueError, request_report
from agreement.models import Report
from hume.roles import IsAdmin, IsResearcher
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


class CampaignStartSerializer(serializers.Serializer):
    """What `manage.py campaign start` takes (docs/campaigns.md, "The CLI")."""

    name = serializers.CharField(max_length=200)
    task = serializers.CharField()
    judge = serializers.CharField()
    target_half_width = serializers.FloatField()
    level = serializers.FloatField(default=0.95)
    estimand = serializers.CharField(required=False, allow_null=True, default=None)
    budget_labels = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    price_per_label = serializers.DecimalField(max_digits=10, decimal_places=4, required=False, allow_null=True,
                                               default=None)
    annotators = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True, default=None)
    overlap = serializers.IntegerField(default=1, min_value=1)
    sampling = serializers.ChoiceField(choices=[s.value for s in Campaign.Sampling], default="uniform")
    seed = serializers.IntegerField(default=0)
    study_link = serializers.CharField(required=False, allow_null=True, default=None,
                                       help_text="'new', or an existing study link's id: the people come through it")
    study_quota = serializers.IntegerField(required=False, allow_null=True, default=None)
    study_minutes = serializers.IntegerField(required=False, allow_null=True, default=None)
    completion_code = serializers.CharField(required=False, allow_null=True, default=None)
    platform = serializers.CharField(required=False, allow_null=True, default=None)


class CampaignStatusSerializer(serializers.Serializer):
    """A campaign's status (agreement/campaigns/campaign_status.py; every key in docs/campaigns.md, "The JSON")."""

    name = serializers.CharField()
    state = serializers.CharField()
    reason = serializers.CharField()
    problem = serializers.CharField()
    judge_run = serializers.JSONField(allow_null=True)
    estimate = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    half_width = serializers.FloatField(allow_null=True)
    labels_used = serializers.IntegerField()
    labels_budget = serializers.IntegerField(allow_null=True)
    people_only_labels = serializers.IntegerField(allow_null=True)
    batches = serializers.JSONField()
    study_link = serializers.JSONField(allow_null=True)


CAMPAIGN_JSON = CampaignStatusSerializer


@extend_schema(responses={200: CAMPAIGN_JSON(many=True)}, operation_id="v1_campaigns_list")
@api_view(["GET"])
@permission_classes([IsAuthenticated & IsResearcher])
def campaign_list(request: Request) -> Response:
    """Every campaign's status JSON, newest first."""
    return Response([campaign_status(c) for c in Campaign.objects.select_related("task", "judge__user", "judge_run")])


@extend_schema(responses={200: CAMPAIGN_JSON})
@api_view(["GET"])
@permission_classes([IsAuthenticated & IsResearcher])
def campaign_detail(request: Request, name: str) -> Response:
    """One campaign's status JSON (the keys of `manage.py campaign status --format json`)."""
    return Response(campaign_status(get_object_or_404(Campaign, name=name)))


@extend_schema(request=CampaignStartSerializer,
               responses={201: CAMPAIGN_JSON,
                          400: inline_serializer("CampaignRefusal", {"detail": serializers.CharField()})})
@api_view(["POST"])
@permission_classes([IsAuthenticated & IsAdmin])
def campaign_start(request: Request) -> Response:
    """Start a campaign: 201 with its status; 400 with `detail` naming the problem (nothing written)."""
    given = CampaignStartSerializer(data=request.data)
    given.is_valid(raise_exception=True)
    fields = dict(given.validated_data)
    try:
        fields["study_link"] = read_wanted(fields.pop("study_link"), quota=fields.pop("study_quota"),
                                           minutes=fields.pop("study_minutes"),
                                           completion_code=fields.pop("completion_code"),
                                           platform=fields.pop("platform"))
        campaign = start_campaign(fields.pop("name"), fields.pop("task"), fields.pop("judge"),
                                  fields.pop("target_half_width"), created_by=request.user, **fields)
    except CampaignError as problem:
        return Response({"detail": str(problem)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(campaign_status(campaign), status=status.HTTP_201_CREATED)


@extend_schema(request=None, responses={200: CAMPAIGN_JSON})
@api_view(["POST"])
@permission_classes([IsAuthenticated & IsAdmin])
def campaign_stop(request: Request, name: str) -> Response:
    """Stop a campaign by hand: its batches close and their holds are freed; 200 with its status."""
    return Response(campaign_status(stop_campaign(get_object_or_404(Campaign, name=name))))
