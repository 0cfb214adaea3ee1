from django.apps import AppConfig


class TasksAppConfig(AppConfig):
    name = "tasks_app"
    verbose_name = "Tasks and items"

    def ready(self) -> None:
        from tasks_app import kind_parts  # noqa: F401  (registers the check that every kind is complete)
