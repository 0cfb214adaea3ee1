"""Celery tasks of the annotation app (Celery autodiscovers this module)."""
from annotation.llm.tasks import run_llm  # noqa: F401
