from django.apps import AppConfig


class SagePageConfig(AppConfig):
    """SAGE studies run from the app (issue 17 item 3): the stored runs behind the researchers' /sage/ page."""

    name = "agreement.sage"
    label = "sage"
    verbose_name = "SAGE studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        register(JobType(name="sage run", model="sage.SageRun", task="sage.run_study"))
