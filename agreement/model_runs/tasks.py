"""Celery tasks of model runs: they take ids, claim atomically, and are safe to deliver twice."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="model_runs.embed_chunk", acks_late=True)
def embed_chunk(chunk_id: int) -> str:
    from agreement.model_runs.runs import execute_chunk

    return execute_chunk(chunk_id)


@shared_task(name="model_runs.score_run", acks_late=True)
def score_model_run(run_id: int) -> str:
    from agreement.model_runs.runs import score_if_ready

    return score_if_ready(run_id) or "taken"
