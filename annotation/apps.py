from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotators, batches and annotations"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from .roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
