from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotators, batches and annotations"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, post_save

        from annotation.core.assignment import release_holds_of_inactive
        from annotation.models import Annotator
        from hume.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
        post_save.connect(release_holds_of_inactive, sender=Annotator, dispatch_uid="release_holds_of_inactive")

        from hume.jobs.registry import JobType, register

        # A paused run is held by an admin: neither re-sent when its lease lapses nor when a worker starts.
        register(JobType(name="LLM run", model="annotation.LLMRun", task="annotation.llm_run", scope={"paused": False}))
