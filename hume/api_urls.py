"""The JSON API, version 1: one include per app."""
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api_urls")),  # first: next and answer are the busiest routes
    path("", include("tasks_app.api_urls")),
    path("", include("annotation.manage_api_urls")),
    path("", include("agreement.api_urls")),
    path("", include("agreement.results_api")),
    path("llm/", include("annotation.llm_api")),
]
