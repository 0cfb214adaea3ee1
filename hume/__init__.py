"""Project package: settings, URLs, the Celery app."""
from hume.lib.celery_app import app as celery_app

__all__ = ("celery_app",)
