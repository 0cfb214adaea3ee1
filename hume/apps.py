"""The settings package as an app: it registers the `<id:...>` URL converter (hume/converters.py) before any
URL module is read, and its management commands come before Django's own (INSTALLED_APPS lists it first)."""
from __future__ import annotations

from django.apps import AppConfig
from django.urls import register_converter

from hume.converters import IdConverter


class HumeConfig(AppConfig):
    name = "hume"

    def ready(self) -> None:
        register_converter(IdConverter, "id")
