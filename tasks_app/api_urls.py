"""API routes of tasks_app (under /api/v1/)."""
from django.urls import path  # noqa: F401

urlpatterns: list = []
