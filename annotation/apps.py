from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotators, batches and annotations"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, post_save

        from annotation.assignment import release_leases_of_inactive
        from annotation.models import Annotator
        from hume.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
        post_save.connect(release_leases_of_inactive, sender=Annotator, dispatch_uid="release_leases_of_inactive")

        from hume.jobs.registry import JobType, register

        # LLM runs keep their own executor token and heartbeat (annotation/llm/run_executor.py): the job layer only
        # resumes them when a worker starts, through its one worker_ready hook.
        register(JobType(name="LLM run", model="annotation.LLMRun", task="annotation.llm_run", leased=False,
                         resume="annotation.llm.run_executor:resumable_runs"))
