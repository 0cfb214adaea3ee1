from django.apps import AppConfig


class ModelRunsConfig(AppConfig):
    """Embedding models and classical metrics run on a task's own items (issue 15; docs/models-in-app.md)."""

    name = "agreement.model_runs"
    label = "model_runs"
    verbose_name = "Models run on the study's items"
    default_auto_field = "django.db.models.BigAutoField"
