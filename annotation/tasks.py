"""Celery tasks of the annotation app (Celery autodiscovers this module)."""
from annotation.llm.tasks import resume_llm_runs, run_llm  # noqa: F401
