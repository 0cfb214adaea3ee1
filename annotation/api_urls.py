"""API routes of annotation (under /api/v1/)."""
from django.urls import path

from . import import_api

urlpatterns: list = []

urlpatterns += [path("annotations/import/", import_api.import_annotations_view, name="api-annotation-import")]
