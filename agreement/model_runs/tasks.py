"""Celery tasks of model runs: they take ids, claim atomically, and are safe to deliver twice.

A chunk another worker holds is looked at again when that worker's lease runs out: if the worker died
with it, this task takes the chunk over then (its cached texts are not encoded again).
"""
from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

log = logging.getLogger(__name__)


@shared_task(name="model_runs.embed_chunk", acks_late=True, bind=True)
def embed_chunk(self, chunk_id: int) -> str:  # type: ignore[no-untyped-def]
    from agreement.model_runs.runs import execute_chunk, seconds_held

    result = execute_chunk(chunk_id)
    if result == "taken":
        held = seconds_held(chunk_id)
        if held is not None:
            embed_chunk.apply_async((chunk_id,), countdown=held + 1)
            return "held"
    return result


@shared_task(name="model_runs.score_run", acks_late=True)
def score_model_run(run_id: int) -> str:
    from agreement.model_runs.runs import score_if_ready

    return score_if_ready(run_id) or "taken"


@shared_task(name="model_runs.resume_runs")
def resume_model_runs() -> list[int]:
    """Give every unfinished chunk of an embedding run a message, timed for when its lease lapses.

    A worker killed outright took its chunk's message with it (the broker gives it back only after its
    hour-long visibility timeout), so each starting worker re-sends them; copies are harmless, the claim
    decides who embeds.
    """
    from agreement.model_runs.runs import resumable_chunks

    waiting = resumable_chunks()
    for chunk_id, wait in waiting:
        embed_chunk.apply_async((chunk_id,), countdown=wait + 1 if wait else 0)
    return [chunk_id for chunk_id, _ in waiting]


@shared_task(name="model_runs.requeue_dead_chunks")
def requeue_dead_chunks() -> dict[str, list[int]]:
    """Periodic (settings.CELERY_BEAT_SCHEDULE, beat embedded in every worker): send a message for each chunk
    whose lease lapsed and each run whose scoring lease lapsed, so a worker that died holding one does not
    leave the run waiting for the next worker to start. Chunks still queued keep their own messages."""
    from agreement.model_runs.runs import dead_chunks, dead_scorings

    chunks, runs = dead_chunks(), dead_scorings()
    for chunk_id in chunks:
        embed_chunk.delay(chunk_id)
    for run_id in runs:
        score_model_run.delay(run_id)
    return {"chunks": chunks, "runs": runs}


@worker_ready.connect
def resume_model_runs_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    try:
        resume_model_runs.delay()
    except Exception:  # a broker hiccup must not stop the worker from starting
        log.exception("could not enqueue the resumption of model runs")
