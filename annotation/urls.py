"""HTML routes of annotation."""
from django.urls import path  # noqa: F401

app_name = "annotation"
urlpatterns: list = []
