from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "agreement.retrieval"
    label = "retrieval"
    verbose_name = "Retrieval collections, runs, pools and graded relevance"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        register(JobType(name="retrieval evaluation", model="retrieval.Evaluation",
                         task="retrieval.evaluate_collection", key="collection_id"))
        # A chunk of a split embedding run: its task takes the run id and ranks chunks until none is left.
        register(JobType(name="split-run chunk", model="retrieval.RunChunk", task="retrieval.embedding_chunk",
                         key="run_id", stranded="agreement.retrieval.split_rankings:unmerged_runs"))
