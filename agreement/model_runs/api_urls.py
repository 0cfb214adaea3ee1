"""API routes of in-app models (under /api/v1/)."""
from django.urls import path

from agreement.model_runs import api

urlpatterns = [
    path("models/", api.model_list, name="api-model-list"),
    path("models/tasks/<id:task_id>/", api.task_models, name="api-task-models"),
]
