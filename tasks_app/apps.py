from django.apps import AppConfig


class TasksAppConfig(AppConfig):
    name = "tasks_app"
    verbose_name = "Tasks and items"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register
        from tasks_app import kind_parts  # noqa: F401  (registers the check that every kind is complete)

        register(JobType(name="dataset import", model="tasks_app.ImportJob", task="tasks_app.import_dataset",
                         queued_since="created_at"))
