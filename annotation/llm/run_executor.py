"""Executing an LLM run on a worker: claiming the run, the loop that keeps requests in flight, handing it back.

Why it is shaped this way:
- A run is a job of the job layer (hume/jobs/): a worker claims it (`claim`, one conditional UPDATE) and holds
  it through a `Lease` the loop renews at every turn (its heartbeat, `accepting`), so a run is executed by at
  most one worker at a time and a dead worker's run is free again within JOB_LEASE_SECONDS, when the layer's
  beat entry sends it again. Runs of one LLM annotator run one after another (the annotator's
  configuration row is locked while a run is claimed), so its max concurrency and requests per minute hold
  across workers.
- The item's request rows are children of that lease (annotation/llm/request_claims.py): claimed with its
  token and written only inside `Lease.fenced()`, so a worker that lost the run writes nothing.
- Only the executor's main thread touches the database; the
  event loop (`inflight.RequestPool`, one thread for every request in flight) only talks HTTP and validates
  answers (annotation/llm/asking.py).
- A worker executes a run for at most LLM_SLICE_SECONDS, then hands it back to the queue (`Lease.release`),
  so one long run does not keep a worker from the others. A slice handed back is not a failed attempt: the
  release takes its attempt back, so JOB_MAX_ATTEMPTS counts only holders that died.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterator
from functools import partial
from itertools import islice
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.core.models import Annotation
from annotation.llm.asking import safe_ask
from annotation.llm.models import LLMAnnotatorConfig, LLMRequest, LLMRun, MissingAPIKey
from annotation.llm.request_claims import Claim, Pending, claim_many, store_many, unclaim
from annotation.llm.run_progress import failed_run_error, run_items, run_progress
from annotation.llm.simulated import run_examples
from annotation.llm.spend import RequestBudget
from hume.jobs.lease import Lease, LeaseLost, claim
from hume.lib.http_client import ChatClient, RateLimiter
from hume.lib.inflight import RequestPool
from tasks_app.models import Item

log = logging.getLogger(__name__)
Status = LLMRun.Status

# Claimed jobs queued per request in flight. The queue must outlast one turn of this loop (gather, store, steer,
# claim: ~100 ms at a thousand answers a second): with half a job per slot, at 256 in flight against a 200 ms
# endpoint, the queue ran dry between turns and the run reached 0.75-0.85× of the bound; with two, 0.84-0.89×.
# One slot fewer than in flight: a run with one request in flight asks strictly one item at a time, so a pause
# or a cancel starts no further request at all; a wider run may start those queued within one turn (the pool
# withdraws the rest at the turn's look at the run, and a refused key stops the pool at once).
QUEUED_PER_SLOT = 2
CLAIM_CHUNK = 500  # rows claimed per statement once a run is large: fewer round trips, each still short
# How long the loop lets answers gather before storing them: a store costs ~10 ms (a commit) plus ~0.25 ms per
# answer, so at a thousand answers a second chunks of a few dozen kept the loop busy with commits alone.
STORE_GATHER_SECONDS = 0.05
# The longest the loop waits for an answer before looking at the run again (a pause or a cancel is seen then).
STEER_SECONDS = 1.0


def acquire(run_id: int, claimed_by: str = "") -> tuple[Lease | None, str]:
    """Claim the run for this worker: (its lease, "acquired"), or (None, why not): "inactive" (finished, paused,
    gone, or out of attempts), "busy-run" (another worker holds it under a live lease) or "busy-annotator"
    (another run of the same LLM annotator is executing)."""
    with transaction.atomic():
        run = LLMRun.objects.filter(pk=run_id).values("annotator_id", "status", "paused").first()
        if run is None or run["status"] not in LLMRun.ACTIVE or run["paused"]:
            return None, "inactive"
        # Serialise claims per annotator, so two runs of one annotator never pass the check together.
        LLMAnnotatorConfig.objects.select_for_update().filter(annotator_id=run["annotator_id"]).first()
        others = LLMRun.objects.filter(annotator_id=run["annotator_id"], status=Status.RUNNING,
                                       lease_expires_at__gte=timezone.now()).exclude(pk=run_id)
        if others.exists():
            return None, "busy-annotator"
        lease = claim(LLMRun.objects.filter(pk=run_id, paused=False), claimed_by=claimed_by,
                      max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is not None:
        return lease, "acquired"
    held = LLMRun.objects.filter(pk=run_id, status=Status.RUNNING, lease_expires_at__gte=timezone.now()).exists()
    return None, "busy-run" if held else "inactive"


def execute_run(run_id: int, claimed_by: str = "") -> str:
    """Execute a slice of the run. Returns "done" (finished, failed or cancelled, or paused: nothing left to
    send); "continue" (send it again now); "wait" (send it again later: another run of the annotator is
    executing, or items are claimed by another run); "busy-run" (another worker holds it: this message is a
    copy, and the job layer sends a new one if that worker dies); or "gone" (nothing to do, or taken over)."""
    lease, verdict = acquire(run_id, claimed_by)
    if lease is None:
        return "wait" if verdict == "busy-annotator" else "gone" if verdict == "inactive" else verdict
    run = LLMRun.objects.select_related("annotator__llm_config", "task", "batch").get(pk=run_id)
    config = run.annotator.llm_config
    try:
        client = ChatClient(config.base_url, config.resolve_api_key(), timeout=config.timeout_seconds,
                            max_retries=config.max_retries, limiter=RateLimiter(config.requests_per_minute),
                            budget=budget_of(config))
    except MissingAPIKey as exc:
        return release(run, lease, fatal_error=str(exc), exhausted=False)
    try:
        fatal_error, exhausted = drive(run, config, client, lease)
    except LeaseLost:
        log.warning("LLM run %s was taken over by another worker; this one stops", run_id)
        return "gone"
    except Exception as exc:  # say why on the run page instead of leaving it to lapse
        log.exception("LLM run %s stopped on an error", run_id)
        release(run, lease, fatal_error=f"the run stopped on an error: {type(exc).__name__}: {exc}", exhausted=False)
        raise
    return release(run, lease, fatal_error=fatal_error, exhausted=exhausted)


def budget_of(config: LLMAnnotatorConfig) -> RequestBudget | None:
    """The endpoint's spend cap, when an admin set one (annotation/llm/spend.py)."""
    if config.max_requests is None:
        return None
    return RequestBudget(LLMAnnotatorConfig, config.pk, f"the LLM endpoint of {config.annotator.user.username}")


def pending_items(run: LLMRun, chunk: int = 500) -> Iterator[Pending]:
    """Items of the run still to ask: not answered by the annotator (an existing answer is never paid for
    again) and, unless failures are retried, not failed with this model and prompt. Read a chunk at a time
    so a large task's payloads are never all in memory."""
    answered = Annotation.objects.filter(annotator_id=run.annotator_id).values("item_id")
    ids = run_items(run.task, run.batch).exclude(pk__in=answered)
    if not run.retry_failed:
        failed = LLMRequest.objects.filter(annotator_id=run.annotator_id, model=run.model,
                                           prompt_version=run.prompt_version, status=LLMRequest.Status.FAILED)
        ids = ids.exclude(pk__in=failed.values("item_id"))
    ids = list(ids.values_list("pk", flat=True))
    for start in range(0, len(ids), chunk):
        part = ids[start:start + chunk]
        found = {pk: Pending(pk, uid, payload)
                 for pk, uid, payload in Item.objects.filter(pk__in=part).values_list("pk", "uid", "payload")}
        yield from (found[pk] for pk in part if pk in found)


def accepting(lease: Lease) -> bool:
    """The loop's heartbeat: renew the run's lease and read its status and hold, in one statement. Whether the
    run still takes new items (running, not paused); `LeaseLost` when another worker holds it now.

    Renewed here, on the loop's own thread, rather than by `Lease.kept()`'s thread: the loop turns at least every
    STEER_SECONDS and never waits on HTTP, so a loop that stopped turning (a hung worker) lets the lease lapse."""
    return lease.renew_reading("status", "paused") == (Status.RUNNING, False)


def drive(run: LLMRun, config: LLMAnnotatorConfig, client: ChatClient, lease: Lease) -> tuple[str | None, bool]:
    """The executor loop: keep max_concurrency requests in flight and about twice as many claimed jobs queued
    behind them (`RequestPool`), store what finished, obey the run's status and hold. Claims are made a chunk
    ahead.

    Returns (fatal error or None, whether every item was looked at)."""
    items = pending_items(run)
    claimed: deque[tuple[Claim, Any]] = deque()  # (row, the item's payload), not sent yet
    fatal_error: str | None = None
    exhausted = False
    deadline = time.monotonic() + float(settings.LLM_SLICE_SECONDS)
    capacity = config.max_concurrency + QUEUED_PER_SLOT * (config.max_concurrency - 1)  # in flight + queued
    ask_one = partial(safe_ask, client, config, run.model, run.task,
                      examples=run_examples(run.task, config.confidence_samples))
    pool: RequestPool[Claim]
    with RequestPool(config.max_concurrency, ask_one, name=f"llm-run-{run.pk}", cleanup=client.close_async,
                     halts=lambda out: out.fatal) as pool:
        while True:
            if accepting(lease) and fatal_error is None and time.monotonic() < deadline:
                room = capacity - pool.outstanding
                if not exhausted and len(claimed) < room:
                    wanted = max(room - len(claimed), min(capacity, CLAIM_CHUNK))
                    chunk = list(islice(items, wanted))
                    exhausted = len(chunk) < wanted
                    payloads = {item.pk: item.payload for item in chunk}
                    claimed.extend((row, payloads[row.item_id]) for row in claim_many(run, lease, chunk))
                while claimed and pool.outstanding < capacity:
                    pool.submit(*claimed.popleft())
            else:
                unsent = [*pool.withdraw(), *(row for row, _ in claimed)]
                unclaim(lease.token, unsent)
                exhausted, claimed = exhausted and not unsent, deque()
            if not pool.outstanding and not claimed:
                return fatal_error, exhausted
            finished = pool.take(timeout=STEER_SECONDS, gather=STORE_GATHER_SECONDS)
            store_many(run, lease, finished)
            for _, out in finished:
                if out.fatal:
                    fatal_error = f"the endpoint refused the request ({out.error}); fix the configuration and resume"


def release(run: LLMRun, lease: Lease, *, fatal_error: str | None, exhausted: bool) -> str:
    """Give the run back: done (or failed) when nothing is left, queued again when a slice ended early or it was
    paused, left as it is when it was cancelled. "gone" when another worker holds it now."""
    try:
        with lease.fenced():
            current = LLMRun.objects.select_related("task").get(pk=run.pk)
            if fatal_error:
                lease.fail(fatal_error)
                return "done"
            if current.status != Status.RUNNING:  # cancelled meanwhile: only the claim is let go
                lease.let_go()
                return "done"
            if current.paused:
                lease.release(not_an_attempt=True)
                return "done"
            return finish_or_requeue(current, lease, exhausted)
    except LeaseLost:
        return "gone"


def finish_or_requeue(run: LLMRun, lease: Lease, exhausted: bool) -> str:
    """Done when every item was looked at and answered or failed (failed if not one was answered); queued
    again otherwise: "continue" (the slice ended) or "wait" (items are still claimed by another run)."""
    progress = run_progress(run)
    if exhausted and progress.done >= progress.total and progress.total and not progress.answered:
        lease.fail(failed_run_error(run, progress.failed))  # not one answer: no success
    elif exhausted and progress.done >= progress.total:
        lease.finish()
    else:
        lease.release(not_an_attempt=True)  # a slice handed back is not a failed attempt
        return "wait" if exhausted else "continue"
    return "done"
