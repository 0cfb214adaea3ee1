"""The management JSON API: annotators, batches, assignments, annotations (read, and revise one's own).

Querysets come from annotation.core.access, so list views are scoped to the requesting user like detail views.
Answers are listed here; one answer (GET/PATCH /annotations/<id>/) belongs to the annotator loop's API.
Object writes look the object up first (someone else's id answers 404, not 403) and then check the role
through the same access helpers the HTML pages use. Creation endpoints are composed as
IsAuthenticated & IsAdmin.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.core import access, assignment, batches, progress
from annotation.core.annotators import create_annotator
from annotation.core.models import AnnotatorLanguage
from annotation.manage.serializers import (
    AnnotatorCreateSerializer,
    AnnotatorSerializer,
    AnswerHistorySerializer,
    AssignmentSerializer,
    AssignSerializer,
    BatchCreateSerializer,
    BatchProgressSerializer,
    BatchSerializer,
    BulkBatchSerializer,
)
from hume.roles import RESEARCHER, IsAdmin, require_role


def problem_response(field: str, message: str) -> Response:
    return Response({field: [message]}, status=status.HTTP_400_BAD_REQUEST)


class ScopedViewSet(viewsets.GenericViewSet):
    """Creation needs an admin; everything else is decided per object by the access helpers. Ids in URLs are row
    ids (`<id:...>`, hume/converters.py: beyond 64 bits is a 404, not a database error)."""

    creation_actions = ("create",)
    lookup_value_converter = "id"

    def get_permissions(self) -> list[BasePermission]:
        if self.action in self.creation_actions:
            return [(IsAuthenticated & IsAdmin)()]
        return [IsAuthenticated()]


class AnnotatorViewSet(mixins.ListModelMixin, ScopedViewSet):
    serializer_class = AnnotatorSerializer

    def get_queryset(self) -> QuerySet:
        return access.visible_annotators(self.request.user).order_by("user__username")

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(AnnotatorSerializer(access.get_annotator_for(request.user, pk)).data)

    def create(self, request: Request) -> Response:
        given = AnnotatorCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        annotator = create_annotator(data["username"], agent=data["agent"], password=data.get("password"),
                                     languages={e["language"]: e.get("proficiency") for e in data["languages"]})
        return Response(AnnotatorSerializer(annotator).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request: Request, pk: str) -> Response:
        annotator = access.get_annotator_to_manage(request.user, pk)
        given = AnnotatorSerializer(annotator, data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        with transaction.atomic():
            if "agent" in data:
                annotator.agent = data["agent"]
                annotator.save(update_fields=["agent"])
            if "languages" in data:
                annotator.languages.all().delete()
                AnnotatorLanguage.objects.bulk_create(AnnotatorLanguage(annotator=annotator, **entry)
                                                      for entry in data["languages"])
            if "active" in data and data["active"] != annotator.active:
                assignment.set_active(annotator, data["active"])
        return Response(AnnotatorSerializer(access.get_annotator_for(request.user, pk)).data)

    def destroy(self, request: Request, pk: str) -> Response:
        access.get_annotator_to_manage(request.user, pk)
        raise MethodNotAllowed("DELETE", detail="Annotators are deactivated, not deleted: their answers must stay.")


class BatchViewSet(mixins.ListModelMixin, ScopedViewSet):
    serializer_class = BatchSerializer
    creation_actions = ("create", "bulk")

    def get_queryset(self) -> QuerySet:
        batches_ = access.visible_batches(self.request.user).prefetch_related("assignees")
        if self.request.query_params.get("is_open") in ("true", "false"):
            batches_ = batches_.filter(is_open=self.request.query_params["is_open"] == "true")
        return batches_.order_by("-created_at", "pk")

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(BatchSerializer(access.get_batch_for(request.user, pk), context={"request": request}).data)

    def create(self, request: Request) -> Response:
        given = BatchCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        spec = batches.BatchSpec(task=data["task"], language=data.get("language") or None,
                                 overlap=data.get("overlap"), name=data.get("name") or None,
                                 hold_seconds=data["hold_seconds"], due_date=data.get("due_date"))
        try:
            batch, created = batches.create_batch(spec, annotators=data.get("annotators", []),
                                                  override_reason=data["override_reason"], created_by=request.user)
        except batches.AssignmentProblem as problem:
            return problem_response(problem.field, problem.message)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(BatchSerializer(batch).data, status=code)

    def partial_update(self, request: Request, pk: str) -> Response:
        batch = access.get_batch_to_manage(request.user, pk)
        given = BatchSerializer(batch, data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        for name, value in given.validated_data.items():
            setattr(batch, name, value)
        batch.save(update_fields=list(given.validated_data) or None)
        return Response(BatchSerializer(batch).data)

    def destroy(self, request: Request, pk: str) -> Response:
        access.get_batch_to_manage(request.user, pk)
        raise MethodNotAllowed("DELETE", detail="Batches are closed, not deleted: their answers must stay.")

    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str) -> Response:
        batch = access.get_batch_for(request.user, pk)
        require_role(request.user, RESEARCHER, "Only admins and researchers read batch progress.")
        return Response(BatchProgressSerializer(progress.batch_progress(batch)).data)

    @action(detail=True, methods=["post"])
    def assignees(self, request: Request, pk: str) -> Response:
        batch = access.get_batch_to_manage(request.user, pk)
        given = AssignSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            seats = batches.assign(batch, given.validated_data["annotators"], assigned_by=request.user,
                                   override_reason=given.validated_data["override_reason"])
        except batches.AssignmentProblem as problem:
            return problem_response(problem.field, problem.message)
        return Response(AssignmentSerializer(seats, many=True).data)

    @action(detail=False, methods=["post"])
    def bulk(self, request: Request) -> Response:
        given = BulkBatchSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        made = batches.create_language_batches(
            data["tasks"], overlap=data.get("overlap"), assign_speakers=data["assign_speakers"],
            hold_seconds=data["hold_seconds"], due_date=data.get("due_date"), created_by=request.user)
        body = [{**BatchSerializer(batch).data, "created": created} for batch, created in made]
        return Response(body, status=status.HTTP_201_CREATED if any(c for _, c in made) else status.HTTP_200_OK)


class AssignmentViewSet(mixins.ListModelMixin, ScopedViewSet):
    """Who is on which batch. Annotators see their own; admins PATCH the override reason or DELETE (unassign)."""

    serializer_class = AssignmentSerializer

    def get_queryset(self) -> QuerySet:
        seats = access.visible_assignments(self.request.user)
        if batch_id := self.request.query_params.get("batch"):
            seats = seats.filter(batch_id=batch_id) if batch_id.isdigit() else seats.none()
        return seats.order_by("batch_id", "annotator__user__username")

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(AssignmentSerializer(access.get_assignment_for(request.user, pk)).data)

    def partial_update(self, request: Request, pk: str) -> Response:
        seat = access.get_assignment_to_manage(request.user, pk)
        given = AssignmentSerializer(seat, data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        if "override_reason" in given.validated_data:
            seat.override_reason = given.validated_data["override_reason"]
            seat.save(update_fields=["override_reason"])
        return Response(AssignmentSerializer(seat).data)

    def destroy(self, request: Request, pk: str) -> Response:
        seat = access.get_assignment_to_manage(request.user, pk)
        batches.unassign(seat.batch, seat.annotator)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AnnotationViewSet(mixins.ListModelMixin, ScopedViewSet):
    """The list of answers (`?batch=<id>` filters): an annotator's own, or all for researchers and admins, each
    with its earlier values. One answer (GET/PATCH /annotations/<id>/) is the annotator loop's endpoint."""

    serializer_class = AnswerHistorySerializer

    def get_queryset(self) -> QuerySet:
        answers = access.visible_annotations(self.request.user).prefetch_related("revisions")
        if batch_id := self.request.query_params.get("batch"):
            answers = answers.filter(batch_id=batch_id) if batch_id.isdigit() else answers.none()
        return answers.order_by("pk")
