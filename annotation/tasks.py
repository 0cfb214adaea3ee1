"""Celery tasks of the annotation app (Celery autodiscovers this module)."""
from .llm_tasks import refresh_judge_panel, resume_llm_runs, run_llm  # noqa: F401
