"""API routes of the annotator's loop (under /api/v1/)."""
from django.urls import path

from annotation import api, import_api

urlpatterns = [
    path("my/batches/", api.my_batches, name="api-annotation-my-batches"),
    path("batches/<id:batch_id>/next/", api.next_for_me, name="api-annotation-next"),
    path("batches/<id:batch_id>/items/<id:item_id>/answer/", api.answer, name="api-annotation-item-answer"),
    path("batches/<id:batch_id>/items/<id:item_id>/skip/", api.skip, name="api-annotation-item-skip"),
    path("batches/<id:batch_id>/items/<id:item_id>/flag/", api.flag, name="api-annotation-item-flag"),
    path("annotations/<id:annotation_id>/", api.my_annotation, name="api-annotation-detail"),
    path("annotations/import/", import_api.import_annotations_view, name="api-annotation-import"),
]
