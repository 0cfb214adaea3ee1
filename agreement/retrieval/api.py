"""JSON API of the retrieval room (researchers and admins): collections, and a collection's stored evaluation.

``GET /api/v1/retrieval/collections/`` lists collections with their subsets and rankings; ``POST`` to it (researchers,
multipart: ``name``, ``language``, optional ``subset``, and ``archive`` or ``corpus`` + ``queries`` + ``qrels``
files) imports one subset as the upload page does: 201 with the counts, or 400 with every problem (file, line,
field, message) and nothing changed;
``GET /api/v1/retrieval/collections/<name>/evaluation/`` gives the stored rows (ranking, subset, reference,
threshold, queries, map, ndcg@1…100, recall@1…100) and the evaluation's status; ``POST`` to it queues a new one.
"""
from __future__ import annotations

from django.db.models import Count
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agreement.retrieval import evaluations
from agreement.retrieval.collection_uploads import import_upload
from agreement.retrieval.models import Collection, Evaluation, collection_name
from hume.jobs import BrokerDown
from hume.lib.import_reader import ImportFailed
from hume.roles import IsResearcher


class SubsetOut(serializers.Serializer):
    name = serializers.CharField()
    language = serializers.CharField()
    documents = serializers.IntegerField()
    queries = serializers.IntegerField()


class RankingOut(serializers.Serializer):
    name = serializers.CharField()
    method = serializers.CharField()
    depth = serializers.IntegerField()


class CollectionOut(serializers.Serializer):
    name = serializers.CharField()
    subsets = SubsetOut(many=True)
    rankings = RankingOut(many=True)


class EvaluationOut(serializers.Serializer):
    status = serializers.CharField()
    error = serializers.CharField()
    updated_at = serializers.DateTimeField()
    rows = serializers.ListField(child=serializers.DictField())


class UploadIn(serializers.Serializer):
    name = serializers.CharField(max_length=200, validators=[collection_name])
    language = serializers.CharField(max_length=32)
    subset = serializers.CharField(max_length=64, required=False, allow_blank=True)
    archive = serializers.FileField(required=False)
    corpus = serializers.FileField(required=False)
    queries = serializers.FileField(required=False)
    qrels = serializers.ListField(child=serializers.FileField(), required=False)


class UploadOut(serializers.Serializer):
    collection = serializers.CharField()
    subset = serializers.CharField()
    language = serializers.CharField()
    created_collection = serializers.BooleanField()
    documents = serializers.IntegerField()
    queries = serializers.IntegerField()
    qrels = serializers.DictField(child=serializers.IntegerField())


class Collections(APIView):
    permission_classes = [IsResearcher]  # researchers read and upload (issue 28: every study from the browser)

    @extend_schema(request={"multipart/form-data": UploadIn}, responses={201: UploadOut})
    def post(self, request: Request) -> Response:
        incoming = UploadIn(data=request.data)
        if not incoming.is_valid():
            return Response({"errors": [{"file": "upload", "line": None, "field": field, "message": " ".join(errors)}
                                        for field, errors in incoming.errors.items()]}, status=400)
        given = incoming.validated_data
        try:
            summary = import_upload(name=given["name"], language=given["language"], subset=given.get("subset") or None,
                                    archive=given.get("archive"), corpus=given.get("corpus"),
                                    queries=given.get("queries"), qrels=given.get("qrels", []))
        except ImportFailed as failed:
            return Response({"errors": [problem.as_dict() for problem in failed.problems]}, status=400)
        return Response(UploadOut(summary).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=CollectionOut(many=True))
    def get(self, request: Request) -> Response:
        out = []
        for collection in Collection.objects.prefetch_related("rankings").order_by("name"):
            subsets = collection.subsets.annotate(n_docs=Count("documents", distinct=True),
                                                  n_queries=Count("queries", distinct=True)).order_by("name")
            out.append({"name": collection.name,
                        "subsets": [{"name": s.name, "language": s.language, "documents": s.n_docs,
                                     "queries": s.n_queries} for s in subsets],
                        "rankings": [{"name": r.name, "method": r.method, "depth": r.depth}
                                     for r in collection.rankings.all()]})
        return Response(CollectionOut(out, many=True).data)


class CollectionEvaluation(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=EvaluationOut)
    def get(self, request: Request, name: str) -> Response:
        collection = get_object_or_404(Collection, name=name)
        evaluation = Evaluation.objects.filter(collection=collection).first()
        if evaluation is None:
            return Response({"detail": "never evaluated: POST here to queue an evaluation"},
                            status=status.HTTP_404_NOT_FOUND)
        return Response(EvaluationOut(evaluation).data)

    @extend_schema(request=None, responses={202: EvaluationOut})
    def post(self, request: Request, name: str) -> Response:
        collection = get_object_or_404(Collection, name=name)
        try:
            evaluation = evaluations.request_evaluation(collection)
        except BrokerDown as down:  # stored and queued: the job layer sends it when the broker is back
            evaluation = Evaluation.objects.get(collection=collection)
            return Response({**EvaluationOut(evaluation).data, "detail": str(down)}, status=status.HTTP_202_ACCEPTED)
        return Response(EvaluationOut(evaluation).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("retrieval/collections/", Collections.as_view(), name="api-retrieval-collections"),
    path("retrieval/collections/<str:name>/evaluation/", CollectionEvaluation.as_view(),
         name="api-retrieval-evaluation"),
]
