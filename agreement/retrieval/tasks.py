"""Celery tasks of the retrieval room: they take ids and claim their work, so a repeated message is harmless."""
from __future__ import annotations

from celery import shared_task

from agreement.retrieval import evaluations


@shared_task(name="retrieval.evaluate_collection", bind=True, acks_late=True, reject_on_worker_lost=True)
def evaluate_collection_task(self, collection_id: int) -> str:
    return evaluations.run_evaluation(collection_id, claimed_by=self.request.id or "inline")


@shared_task(name="retrieval.embedding_chunk", acks_late=True, reject_on_worker_lost=True)
def embedding_chunk_task(ranking_id: int) -> int:
    """Rank chunks of a split embedding ranking until none is left; the last worker merges (split_rankings.py)."""
    from agreement.retrieval import split_rankings

    return split_rankings.work(ranking_id)


@shared_task(name="retrieval.rank_bm25", bind=True, acks_late=True, reject_on_worker_lost=True)
def rank_bm25_task(self, ranking_id: int) -> str:
    """Write a BM25 ranking a researcher started from the collection's page (actions.py); claims it first."""
    from agreement.retrieval import actions

    return actions.rank_bm25(ranking_id, claimed_by=self.request.id or "inline")


@shared_task(name="retrieval.bm25_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def bm25_run_task(self, ranking_id: int, k: int) -> str:
    """The name and arguments a BM25 message had before the ranking kept its own k (a message sent by an older
    version and still in the broker at an upgrade): the k goes on the row if it has none, then as above."""
    from agreement.retrieval import actions
    from agreement.retrieval.models import Ranking

    Ranking.objects.filter(pk=ranking_id, k__isnull=True).update(k=k)
    return actions.rank_bm25(ranking_id, claimed_by=self.request.id or "inline")
