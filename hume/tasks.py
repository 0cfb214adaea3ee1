"""The `hume` app's Celery tasks, found by autodiscovery: the job layer's (hume/jobs/tasks.py)."""
from hume.jobs.tasks import requeue_lapsed, resume  # noqa: F401
