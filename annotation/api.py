"""The annotator's loop as a JSON API, for scripted clients and LLM annotators.

The same engine and the same kind validation as the browser: next item, answer, skip, flag, and one's own
annotations to read and revise. Everything is scoped to the requesting annotator; another annotator's batch,
item or annotation is a 404, never a 403 that would confirm it exists.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.http import Http404
from django.urls import get_script_prefix, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.core.access import (
    annotator_of,
    batches_offered_to,
    get_annotation_for,
    get_batch_to_annotate,
    get_item_to_write,
    get_own_annotation,
)
from annotation.core.assignment import (
    AssignmentRefused,
    SubmitResult,
    annotator_progress,
    flag_item,
    next_item,
    skip_item,
    submit_answer,
)
from annotation.models import Annotator, Batch
from annotation.serializers import (
    AnnotationPatchSerializer,
    AnnotationSerializer,
    AnswerInSerializer,
    FlagInSerializer,
    MyBatchSerializer,
    NextItemSerializer,
    ProblemSerializer,
    SkipInSerializer,
    WriteResultSerializer,
    next_item_data,
    write_result_data,
)
from tasks_app.core.kinds import ValidationProblem
from tasks_app.models import Item

REFUSED = OpenApiResponse(ProblemSerializer, description="The engine refused (closed batch, not held, overlap full).")
INVALID = OpenApiResponse(ProblemSerializer, description="The value does not fit the kind; `field` names the problem.")
NOT_YOURS = OpenApiResponse(description="No such batch, item or annotation for this annotator.")


def _annotator(request: Request) -> Annotator:
    annotator = annotator_of(request.user)
    if annotator is None:
        raise Http404("You are not an annotator.")
    return annotator


def _refused(exc: AssignmentRefused) -> Response:
    return Response({"detail": str(exc), "code": getattr(exc, "code", "refused")}, status=status.HTTP_409_CONFLICT)


def _invalid(problem: ValidationProblem) -> Response:
    return Response({"detail": str(problem), "field": problem.field, "value": [problem.message]},
                    status=status.HTTP_400_BAD_REQUEST)


def _written(result: SubmitResult) -> Response:
    data = write_result_data(result.annotation, result.created, result.revised)
    return Response(data, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


def _urls(batch: Batch, item: Item) -> dict[str, str]:
    return {key: template.format(batch=batch.pk, item=item.pk)
            for key, template in _url_templates(get_script_prefix()).items()}


@lru_cache(maxsize=8)
def _url_templates(script_prefix: str) -> dict[str, str]:
    """Where to answer, skip or flag, as templates reversed once per process (three reverse() calls took 0.2 ms
    of every next-item request). Keyed by the script prefix, which reverse() includes."""
    batch, item = 9_000_000_001, 9_000_000_002  # stand-ins that cannot occur elsewhere in the routes
    return {f"{action}_url": reverse(f"api-annotation-item-{action}", args=[batch, item])
            .replace(str(batch), "{batch}").replace(str(item), "{item}") for action in ("answer", "skip", "flag")}


@extend_schema(tags=["annotate"], summary="My open batches with progress", responses=MyBatchSerializer(many=True))
@api_view(["GET"])
def my_batches(request: Request) -> Response:
    annotator = _annotator(request)
    rows: list[dict[str, Any]] = []
    for batch in batches_offered_to(annotator).select_related("task").order_by("due_date", "name"):
        rows.append({"batch": batch, "task": batch.task, "progress": annotator_progress(annotator, batch),
                     "next_url": reverse("api-annotation-next", args=[batch.pk])})
    return Response(MyBatchSerializer(rows, many=True).data)


@extend_schema(tags=["annotate"], summary="The next item for me in a batch (held for me)",
               description="The same item again while my hold on it lives. 204 when nothing is left for me.",
               responses={200: NextItemSerializer, 204: OpenApiResponse(description="Nothing left for you."),
                          404: NOT_YOURS, 409: REFUSED})
@api_view(["GET"])
def next_for_me(request: Request, batch_id: int) -> Response:
    annotator, batch = get_batch_to_annotate(request.user, batch_id)
    try:
        item = next_item(annotator, batch)
    except AssignmentRefused as exc:
        return _refused(exc)
    if item is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(next_item_data(item, batch, annotator_progress(annotator, batch), _urls(batch, item)))


@extend_schema(tags=["annotate"], summary="Answer an item", request=AnswerInSerializer,
               description="201 when stored, 200 for an identical replay or a revision (no second row).",
               responses={201: WriteResultSerializer, 200: WriteResultSerializer, 400: INVALID, 404: NOT_YOURS,
                          409: REFUSED})
@api_view(["POST"])
def answer(request: Request, batch_id: int, item_id: int) -> Response:
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    incoming = AnswerInSerializer(data=request.data)
    incoming.is_valid(raise_exception=True)
    comment = incoming.validated_data.get("flag_comment", "")
    try:
        result = submit_answer(annotator, batch, item, incoming.validated_data["value"],
                               time_spent_ms=incoming.validated_data.get("time_spent_ms"),
                               flagged=bool(comment), flag_comment=comment, source="api")
    except ValidationProblem as problem:
        return _invalid(problem)
    except AssignmentRefused as exc:
        return _refused(exc)
    return _written(result)


@extend_schema(tags=["annotate"], summary="Skip an item with a reason", request=SkipInSerializer,
               responses={201: WriteResultSerializer, 200: WriteResultSerializer, 404: NOT_YOURS, 409: REFUSED})
@api_view(["POST"])
def skip(request: Request, batch_id: int, item_id: int) -> Response:
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    incoming = SkipInSerializer(data=request.data)
    incoming.is_valid(raise_exception=True)
    try:
        result = skip_item(annotator, batch, item, reason=incoming.validated_data["reason"],
                           time_spent_ms=incoming.validated_data.get("time_spent_ms"), source="api")
    except AssignmentRefused as exc:
        return _refused(exc)
    return _written(result)


@extend_schema(tags=["annotate"], summary="Flag an item as problematic", request=FlagInSerializer,
               description="Flags my answer if I gave one; otherwise records a flagged skip.",
               responses={201: WriteResultSerializer, 200: WriteResultSerializer, 404: NOT_YOURS, 409: REFUSED})
@api_view(["POST"])
def flag(request: Request, batch_id: int, item_id: int) -> Response:
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    incoming = FlagInSerializer(data=request.data)
    incoming.is_valid(raise_exception=True)
    try:
        result = flag_item(annotator, batch, item, comment=incoming.validated_data["comment"], source="api")
    except AssignmentRefused as exc:
        return _refused(exc)
    return _written(result)


ANSWERS_ARE_KEPT = ("Answers are never deleted: everything an annotator submitted is kept. Revise the answer "
                    "with PATCH instead (its previous value is kept as a revision).")


# One annotation: readable by whoever may see it, revisable by its annotator while the batch is open, never
# deleted. (A comment, not a docstring: drf-spectacular would publish a class docstring as the GET description.)
class MyAnnotation(APIView):
    http_method_names = ["get", "patch", "options"]  # as @api_view(["GET", "PATCH"]) had it: no HEAD

    @extend_schema(tags=["annotate"], summary="One of my annotations",
                   responses={200: AnnotationSerializer, 404: NOT_YOURS})
    def get(self, request: Request, annotation_id: int) -> Response:
        return Response(AnnotationSerializer(get_annotation_for(request.user, annotation_id)).data)

    @extend_schema(tags=["annotate"], summary="Revise one of my annotations",
                   description="The previous value is kept as a revision. Allowed while the batch is open.",
                   request=AnnotationPatchSerializer,
                   responses={200: AnnotationSerializer, 400: INVALID, 404: NOT_YOURS, 409: REFUSED})
    def patch(self, request: Request, annotation_id: int) -> Response:
        annotation = get_own_annotation(request.user, annotation_id)
        annotator = annotation.annotator
        incoming = AnnotationPatchSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        if annotation.batch is None:
            return Response({"detail": "This annotation belongs to no batch and cannot be revised here.",
                             "code": "not_in_batch"}, status=status.HTTP_409_CONFLICT)
        try:
            result = submit_answer(annotator, annotation.batch, annotation.item, incoming.validated_data["value"],
                                   source="api")
        except ValidationProblem as problem:
            return _invalid(problem)
        except AssignmentRefused as exc:
            return _refused(exc)
        return Response(AnnotationSerializer(result.annotation).data)

    def http_method_not_allowed(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """DELETE of an answer the caller may see gets a 405 that says why; anyone else's, or a missing one, 404
        (as GET and PATCH: another annotator's ids reveal nothing)."""
        if request.method == "DELETE":
            get_annotation_for(request.user, kwargs["annotation_id"])
            return Response({"detail": ANSWERS_ARE_KEPT, "code": "answers_are_kept"},
                            status=status.HTTP_405_METHOD_NOT_ALLOWED)
        return super().http_method_not_allowed(request, *args, **kwargs)


my_annotation = MyAnnotation.as_view()
