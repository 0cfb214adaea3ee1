from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "agreement.retrieval"
    label = "retrieval"
    verbose_name = "Retrieval collections, runs, pools and graded relevance"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        register(JobType(name="retrieval evaluation", model="retrieval.Evaluation",
                         task="retrieval.evaluate_collection", key="collection_id"))
