"""HTML routes of agreement."""
from django.urls import path  # noqa: F401

app_name = "agreement"
urlpatterns: list = []
