from django.apps import AppConfig


class ModelRunsConfig(AppConfig):
    """Embedding models and classical metrics run on a task's own items (issue 15; docs/models-in-app.md)."""

    name = "agreement.model_runs"
    label = "model_runs"
    verbose_name = "Models run on the study's items"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        # A chunk of a run still embedding (the run is queued meanwhile); a run's scoring step (running while held;
        # a queued run waits for its chunks, which have their own messages).
        register(JobType(name="model-run chunk", model="model_runs.RunChunk", task="model_runs.embed_chunk",
                         scope={"run__status": "queued"}))
        register(JobType(name="model-run scoring", model="model_runs.ModelRun", task="model_runs.score_run",
                         resume_queued=False))
