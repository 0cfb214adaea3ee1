from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "agreement.retrieval"
    label = "retrieval"
    verbose_name = "Retrieval collections, rankings, pools and graded relevance"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        # A BM25 ranking started from the page: the ranking row itself is the job (imported rankings and those
        # made by a command are written done; a split embedding ranking's jobs are its chunks, below).
        register(JobType(name="BM25 ranking", model="retrieval.Ranking", task="retrieval.rank_bm25",
                         scope={"method": "bm25"}))
        register(JobType(name="retrieval evaluation", model="retrieval.Evaluation",
                         task="retrieval.evaluate_collection", key="collection_id"))
        # A chunk of a split embedding ranking: its task takes the ranking id and ranks chunks until none is left.
        register(JobType(name="split-ranking chunk", model="retrieval.RankingChunk", task="retrieval.embedding_chunk",
                         key="ranking_id", stranded="agreement.retrieval.split_rankings:unmerged_rankings"))
