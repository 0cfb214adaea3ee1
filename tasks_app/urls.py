"""HTML routes of tasks_app."""
from django.urls import path  # noqa: F401

app_name = "tasks_app"
urlpatterns: list = []
