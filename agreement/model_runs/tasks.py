"""Celery tasks of model runs: they take ids, claim atomically, and are safe to deliver twice.

A chunk another worker holds is looked at again when that worker's lease runs out: if the worker died
with it, this task takes the chunk over then (its cached texts are not encoded again). Chunks and scorings
whose worker died are found and sent again by the job layer (hume/jobs/recovery.py), registered in apps.py.
"""
from __future__ import annotations

import logging

from celery import shared_task

from hume.jobs import recovery

log = logging.getLogger(__name__)


@shared_task(name="model_runs.embed_chunk", acks_late=True, bind=True)
def embed_chunk(self, chunk_id: int) -> str:  # type: ignore[no-untyped-def]
    from agreement.model_runs.execution import execute_chunk, holding_chunk

    result = execute_chunk(chunk_id)
    if result == "taken":
        held = recovery.until_lapsed(holding_chunk(chunk_id))
        if held is not None:
            recovery.look_again("model-run chunk", chunk_id, after=held)
            return "held"
    return result


@shared_task(name="model_runs.score_run", acks_late=True)
def score_model_run(run_id: int) -> str:
    from agreement.model_runs.execution import score_if_ready

    return score_if_ready(run_id) or "taken"
