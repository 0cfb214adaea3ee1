"""The `hume` app's one concrete model, the job layer's outbox (declared in hume/jobs/models.py, where the
layer keeps its rows; Django reads an app's models from this module)."""
from hume.jobs.models import UnsentMessage  # noqa: F401
