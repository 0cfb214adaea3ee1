"""The JSON API, version 1: one include per app."""
from django.urls import include, path

from hume.api_root import ApiRoot

urlpatterns = [
    path("", ApiRoot.as_view(), name="api-root"),
    path("", include("annotation.api_urls")),  # first: next and answer are the busiest routes
    path("", include("tasks_app.api_urls")),
    path("", include("annotation.manage.api_urls")),
    path("", include("agreement.api_urls")),
    path("", include("agreement.results.api")),
    path("", include("agreement.model_runs.api_urls")),
    path("llm/", include("annotation.llm.api")),
    path("", include("agreement.retrieval.api")),
]
