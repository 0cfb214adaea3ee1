"""API routes of tasks_app (under /api/v1/)."""
from django.urls import path

from . import api

urlpatterns = [
    path("tasks/", api.TaskViewSet.as_view({"get": "list"}), name="api-task-list"),
    path("tasks/import/", api.import_dataset, name="api-task-import"),
    path("tasks/imports/<id:job_id>/", api.import_status, name="api-task-import-status"),
    path("tasks/<id:pk>/", api.TaskViewSet.as_view({"get": "retrieve"}), name="api-task-detail"),
]
