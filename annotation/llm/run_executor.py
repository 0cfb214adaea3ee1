"""Running an LLM annotator over a batch or a task: creating, executing and steering runs.

Why it is shaped this way:
- A run is executed by at most one worker at a time (`executor_token` + `heartbeat_at` on the run), and
  runs of one LLM annotator one after another, so its max concurrency and requests per minute hold across
  workers. A worker that dies stops heart-beating; after three intervals another worker takes the run over.
- Every answer is bought through a row of the request log, claimed *before* the API is called (unique
  (annotator, request key)). A claim whose executor no longer heart-beats can be reclaimed. So a re-run, a
  redelivered task or a crashed worker never pays twice for a finished item, and never stores twice
  (the annotation is written ON CONFLICT DO NOTHING on the unique (item, annotator)).
- Claims and answers are written a chunk at a time (`claim_many`, `store_many`): one round trip per chunk,
  not per item, so the main thread keeps hundreds of requests in flight; the report hears of a stored
  chunk through one `annotations_imported` signal.
- Only the executor's main thread touches the database; its event loop (`inflight.RequestPool`, one thread
  for every request in flight) only talks HTTP and validates answers.
- Answers never go through leases or overlap k: they are written directly, with source="llm".
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from itertools import islice
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from annotation.annotators import create_annotator
from annotation.llm.client import ChatClient, EndpointError, ProtocolError, RateLimiter
from annotation.llm.confidence import answer_probability, vote_share
from annotation.llm.inflight import RequestPool
from annotation.llm.models import LLMAnnotatorConfig, LLMRequest, LLMRun, MissingAPIKey, request_key
from annotation.llm.prompting import (
    PROMPT_VERSIONS,
    AnswerProblem,
    answer_from_reply,
    build_messages,
    correction_message,
)
from annotation.llm.request_sql import insert_claims, store_outcomes
from annotation.llm.simulated import Example, run_examples, simulated_answers
from annotation.llm.spend import RequestBudget
from annotation.models import Annotation, Annotator, Batch
from annotation.signals import annotations_imported
from tasks_app.models import Item, Task

log = logging.getLogger(__name__)
Status = LLMRun.Status


def heartbeat_seconds() -> float:
    return float(getattr(settings, "LLM_HEARTBEAT_SECONDS", 5.0))


def stale_before() -> datetime:
    """Heartbeats older than this mean the executor is gone."""
    return timezone.now() - timedelta(seconds=3 * heartbeat_seconds())


# ------------------------------------------------------------------ annotators and runs


def create_llm_annotator(name: str, *, created_by: User | None = None, **config: Any) -> LLMAnnotatorConfig:
    """An Annotator of kind llm (its user cannot log in) with its endpoint configuration, validated."""
    with transaction.atomic():
        annotator = create_annotator(name, kind=Annotator.Kind.LLM)  # no password: it cannot log in
        llm = LLMAnnotatorConfig(annotator=annotator, created_by=created_by, **config)
        llm.full_clean()
        llm.save()
    return llm


def run_items(task: Task, batch: Batch | None) -> QuerySet[Item]:
    """The items a run answers, in the order annotators see them; payload only, never gold."""
    if batch is not None:
        items = Item.objects.filter(batch_items__batch=batch).order_by("batch_items__position")
    else:
        items = Item.objects.filter(task=task).in_pool().order_by("position")
    return items.only("id", "uid", "payload", "task_id")


def create_run(annotator: Annotator, *, batch: Batch | None = None, task: Task | None = None,
               created_by: User | None = None, retry_failed: bool = False) -> LLMRun:
    """A queued run of `annotator` over a batch, or over a task's pool when no batch is given."""
    config = LLMAnnotatorConfig.objects.filter(annotator=annotator).first()
    if annotator.kind != Annotator.Kind.LLM or config is None:
        raise ValueError(f"{annotator.name} is not an LLM annotator with an endpoint configuration")
    if batch is not None:
        if task is not None and task.pk != batch.task_id:
            raise ValueError(f"batch {batch.name} belongs to another task")
        task = batch.task
    if task is None:
        raise ValueError("a run needs a batch or a task")
    return LLMRun.objects.create(
        annotator=annotator, task=task, batch=batch, model=config.model, prompt_version=PROMPT_VERSIONS[task.kind],
        retry_failed=retry_failed, total_items=run_items(task, batch).count(), created_by=created_by,
    )


def pause_run(run: LLMRun) -> bool:
    """Stop taking new items; requests in flight finish and are stored."""
    return bool(LLMRun.objects.filter(pk=run.pk, status__in=LLMRun.ACTIVE).update(status=Status.PAUSED))


def resume_run(run: LLMRun) -> bool:
    """Queue a paused or failed run again, or a stalled one (its worker died and no worker restarted since);
    the caller enqueues it. Finished items are never asked again."""
    if LLMRun.objects.filter(pk=run.pk, status__in=(Status.PAUSED, Status.FAILED)).update(
            status=Status.QUEUED, error="", finished_at=None):
        return True
    return stalled_runs().filter(pk=run.pk).exists()


def is_stalled(run: LLMRun) -> bool:
    """Running, but its executor stopped heart-beating: the worker died (resume re-enqueues it)."""
    return run.status == Status.RUNNING and (run.heartbeat_at is None or run.heartbeat_at < stale_before())


def cancel_run(run: LLMRun) -> bool:
    return bool(LLMRun.objects.filter(pk=run.pk, status__in=(*LLMRun.ACTIVE, Status.PAUSED))
                .update(status=Status.CANCELLED, finished_at=timezone.now()))


@dataclass(frozen=True)
class Progress:
    total: int
    answered: int
    failed: int
    in_flight: int

    @property
    def done(self) -> int:
        return self.answered + self.failed

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def run_item_filter(run: LLMRun, prefix: str = "item__") -> Q:
    """`run_items` as a join condition on rows that point at an item (annotations, request rows)."""
    if run.batch_id is not None:
        return Q(**{f"{prefix}batch_items__batch_id": run.batch_id})
    where = Q(**{f"{prefix}task_id": run.task_id})
    return where if run.task.sample_size is None else where & Q(**{f"{prefix}in_sample": True})


@contextmanager
def without_nested_loops() -> Iterator[None]:
    """Plan the enclosed counts with hash joins: linear whatever the statistics say.

    Why: right after a pool is imported and judged, PostgreSQL's statistics still say the task has no items
    and the judge no answers; it then joined them in a nested loop that scanned every item per answer, and the
    final progress count of a 4,000-pair run took 14 s (the whole run took 5). A count over a run's items gains
    nothing from a nested loop anyway."""
    if connection.vendor != "postgresql":
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('enable_nestloop', 'off', true)")
        try:
            yield
        finally:
            cursor.execute("SELECT set_config('enable_nestloop', 'on', true)")


def run_requests(run: LLMRun) -> QuerySet[LLMRequest]:
    """The request rows of the run's items under its annotator, model and prompt version (this run's or earlier)."""
    return LLMRequest.objects.filter(run_item_filter(run), annotator_id=run.annotator_id, model=run.model,
                                     prompt_version=run.prompt_version)


def run_progress(run: LLMRun) -> Progress:
    """Answered = the annotator has an annotation (from this run or earlier); failed = this prompt's key failed."""
    of_run = run_item_filter(run)
    requests = run_requests(run)
    with without_nested_loops():
        answered = Annotation.objects.filter(of_run, annotator_id=run.annotator_id).count()
        failed = requests.filter(status=LLMRequest.Status.FAILED).exclude(
            item__annotations__annotator_id=run.annotator_id).count()
        in_flight = requests.filter(status=LLMRequest.Status.CLAIMED).count()
    return Progress(total=run_items(run.task, run.batch).count(), answered=answered, failed=failed,
                    in_flight=in_flight)


# ------------------------------------------------------------------ one item: HTTP and validation (event loop)


@dataclass
class Outcome:
    """What one item's requests produced; built on the requests' event loop, stored by the main thread."""

    value: Any = None
    ok: bool = False
    reasoning: str = ""
    raw_outputs: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    failure_kind: str = ""
    error: str = ""
    http_status: int | None = None
    fatal: bool = False
    confidence: float | None = None


def request_body(config: LLMAnnotatorConfig, model: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": config.temperature}
    if config.max_tokens:
        body["max_tokens"] = config.max_tokens
    if config.json_mode:
        body["response_format"] = {"type": "json_object"}
    if config.logprobs:
        body["logprobs"] = True
    return body


async def ask(client: ChatClient, config: LLMAnnotatorConfig, model: str, task: Task,
              payload: dict[str, Any], examples: list[list[Example]] | None = None) -> Outcome:
    """Ask until a valid answer, re-asking with the problem stated after a malformed one (bounded); then its
    confidence: from the reply's log-probs, else from simulated annotators when `examples` holds K sets."""
    messages = build_messages(task, payload)
    out = Outcome()
    for _ in range(config.max_answer_retries + 1):
        try:
            reply = await client.complete_async(request_body(config, model, messages))
        except EndpointError as exc:
            out.attempts += exc.attempts
            out.failure_kind, out.error, out.http_status, out.fatal = exc.kind, str(exc), exc.status, exc.fatal
            out.raw_outputs.append({"error": str(exc), "status": exc.status, "body": exc.body})
            return out
        except ProtocolError as exc:
            out.attempts += exc.attempts
            out.raw_outputs.append({"content": exc.raw, "problem": str(exc)})
            out.error = str(exc)
            continue
        out.attempts += reply.attempts
        out.prompt_tokens += reply.prompt_tokens
        out.completion_tokens += reply.completion_tokens
        out.latency_ms += reply.latency_ms
        out.raw_outputs.append({"content": reply.content, "finish_reason": reply.finish_reason})
        try:
            out.value, out.reasoning = answer_from_reply(task, payload, reply.content)
        except AnswerProblem as problem:
            out.raw_outputs[-1]["problem"] = out.error = str(problem)
            messages = [*messages, {"role": "assistant", "content": reply.content}, correction_message(str(problem))]
            continue
        out.ok, out.error = True, ""
        out.confidence = answer_probability(reply.content, reply.logprobs)
        if out.confidence is None and examples:
            await add_simulated_confidence(out, client, config, model, task, payload, examples)
        return out
    out.failure_kind = "malformed"
    return out


async def add_simulated_confidence(out: Outcome, client: ChatClient, config: LLMAnnotatorConfig, model: str,
                                   task: Task, payload: dict[str, Any], examples: list[list[Example]]) -> None:
    """The share of the answers (the stored one and the simulated annotators') equal to the stored one."""
    votes = await simulated_answers(client, partial(request_body, config, model), task, payload, examples)
    out.attempts += votes.attempts
    out.prompt_tokens += votes.prompt_tokens
    out.completion_tokens += votes.completion_tokens
    out.raw_outputs.extend(votes.raw_outputs)
    out.confidence = vote_share(out.value, [out.value, *votes.answers])


async def safe_ask(*args: Any, **kwargs: Any) -> Outcome:
    """A bug in one item must not take the run down: it becomes that item's recorded failure."""
    try:
        return await ask(*args, **kwargs)
    except Exception as exc:  # recorded on the request row, with its type
        log.exception("LLM request failed unexpectedly")
        return Outcome(failure_kind="error", error=f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------ claims and storage (main thread)


def live_tokens() -> QuerySet[LLMRun]:
    """Tokens of executors that heart-beat recently; a claim by any other token may be taken over."""
    alive = LLMRun.objects.filter(executor_token__isnull=False, heartbeat_at__gte=stale_before())
    return alive.values("executor_token")


def claim(run: LLMRun, token: uuid.UUID, item: Item) -> LLMRequest | None:
    """Claim the item's request row for this executor, or None when it is done or claimed by a live executor."""
    key = request_key(run.model, run.prompt_version, item.uid)
    row, created = LLMRequest.objects.get_or_create(
        annotator_id=run.annotator_id, request_key=key,
        defaults={"item_id": item.pk, "run": run, "model": run.model, "prompt_version": run.prompt_version,
                  "claimed_by": token, "claimed_at": timezone.now()},
    )
    return row if created else take_over(run, token, row)


def take_over(run: LLMRun, token: uuid.UUID, row: LLMRequest) -> LLMRequest | None:
    """An existing row: restore a paid answer, skip a failure or a live claim, or take a dead claim over."""
    if row.status == LLMRequest.Status.SUCCEEDED:
        restore_annotation(run, row)
        return None
    if row.status == LLMRequest.Status.FAILED and not run.retry_failed:
        return None
    if row.status == LLMRequest.Status.CLAIMED and live_tokens().filter(executor_token=row.claimed_by).exists():
        return None
    now = timezone.now()
    taken = LLMRequest.objects.filter(pk=row.pk, status=row.status, claimed_by=row.claimed_by).update(
        status=LLMRequest.Status.CLAIMED, claimed_by=token, claimed_at=now, run=run)
    if not taken:
        return None
    row.status, row.claimed_by, row.claimed_at, row.run = LLMRequest.Status.CLAIMED, token, now, run
    return row


class Pending(NamedTuple):
    """An item still to ask, as the executor needs it (no model instance: a run reads a thousand a second)."""
    pk: int
    uid: str
    payload: dict[str, Any]


class Claim(NamedTuple):
    """A request row this executor holds: what storing its answer needs."""
    pk: int
    item_id: int
    claimed_at: datetime


def claim_many(run: LLMRun, token: uuid.UUID, items: list[Pending]) -> list[Claim]:
    """`claim` for a chunk of items: one INSERT of every missing row (ON CONFLICT DO NOTHING: the unique
    (annotator, request key) still decides who owns a row); rows that already existed are read and go through
    `take_over` one by one (rare: re-runs and dead claims). In item order."""
    if not items:
        return []
    now = timezone.now()
    keys = {request_key(run.model, run.prompt_version, item.uid): item for item in items}
    if connection.vendor == "postgresql":
        inserted = insert_claims(run, token, now, {key: item.pk for key, item in keys.items()})
    else:
        LLMRequest.objects.bulk_create(
            [LLMRequest(annotator_id=run.annotator_id, request_key=key, item_id=item.pk, run=run, model=run.model,
                        prompt_version=run.prompt_version, claimed_by=token, claimed_at=now)
             for key, item in keys.items()], ignore_conflicts=True)
        inserted = {}
    existing = {row.request_key: row for row in LLMRequest.objects.filter(
        annotator_id=run.annotator_id, request_key__in=[key for key in keys if key not in inserted])}
    mine = []
    for key, item in keys.items():
        if key in inserted:
            mine.append(Claim(inserted[key], item.pk, now))
        elif (row := existing.get(key)) is None:
            continue
        elif row.status == LLMRequest.Status.CLAIMED and row.claimed_by == token:
            mine.append(Claim(row.pk, row.item_id, row.claimed_at))  # inserted just now (not PostgreSQL)
        elif (taken := take_over(run, token, row)) is not None:
            mine.append(Claim(taken.pk, taken.item_id, taken.claimed_at))
    return mine


def restore_annotation(run: LLMRun, row: LLMRequest) -> None:
    """A paid answer whose annotation is missing (deleted by hand) is stored again without a new request."""
    Annotation.objects.get_or_create(item_id=row.item_id, annotator_id=run.annotator_id,
                                     defaults={"batch": run.batch, "value": row.answer, "source": "llm",
                                               "confidence": row.confidence})


def store_many(run: LLMRun, token: uuid.UUID, finished: list[tuple[Claim, Outcome]]) -> None:
    """Store every outcome that arrived together, in one transaction: the run's counters once, the
    rows still claimed by this token locked and updated in one statement, fatal ones deleted, the answers
    inserted in one statement (ON CONFLICT DO NOTHING on the unique (item, annotator): an answer already
    there is kept), and one `annotations_imported` signal for the report instead of a post_save per row."""
    if not finished:
        return
    now = timezone.now()
    if connection.vendor == "postgresql" and not any(out.fatal for _, out in finished):
        pairs = [(row.pk, out) for row, out in finished]
        stored = sum(store_outcomes(run, token, now, pairs[start:start + STORE_CHUNK])
                     for start in range(0, len(pairs), STORE_CHUNK))
        if stored:
            annotations_imported.send(sender=Annotation, task_id=run.task_id)
        return
    with transaction.atomic():
        LLMRun.objects.filter(pk=run.pk).update(
            http_requests=F("http_requests") + sum(out.attempts for _, out in finished),
            prompt_tokens=F("prompt_tokens") + sum(out.prompt_tokens for _, out in finished),
            completion_tokens=F("completion_tokens") + sum(out.completion_tokens for _, out in finished))
        outcomes = {row.pk: (row, out) for row, out in finished}
        locked = {row.pk: row for row in LLMRequest.objects.select_for_update().filter(
            pk__in=list(outcomes), claimed_by=token, status=LLMRequest.Status.CLAIMED).order_by("pk")}
        fatal = [pk for pk in locked if outcomes[pk][1].fatal]  # says nothing about the item: a later run asks
        if fatal:
            LLMRequest.objects.filter(pk__in=fatal).delete()
        updated, answers = [], []
        for pk, row in locked.items():
            claimed, out = outcomes[pk]
            if out.fatal:
                continue
            row.status = LLMRequest.Status.SUCCEEDED if out.ok else LLMRequest.Status.FAILED
            row.finished_at, row.answer = now, (out.value if out.ok else None)
            row.attempts += out.attempts
            row.prompt_tokens += out.prompt_tokens
            row.completion_tokens += out.completion_tokens
            row.reasoning, row.raw_outputs = out.reasoning, [*row.raw_outputs, *out.raw_outputs]
            row.error, row.failure_kind, row.http_status, row.latency_ms = (
                out.error, out.failure_kind, out.http_status, out.latency_ms)
            row.confidence = out.confidence if out.ok else None
            updated.append(row)
            if out.ok:
                answers.append(Annotation(item_id=row.item_id, annotator_id=run.annotator_id, batch=run.batch,
                                          value=out.value, source="llm", started_at=claimed.claimed_at,
                                          time_spent_ms=out.latency_ms, confidence=row.confidence))
        # One INSERT ... ON CONFLICT DO UPDATE of rows this transaction holds locked: linear in the rows, where
        # bulk_update's CASE per field is quadratic (a second for a hundred answers).
        LLMRequest.objects.bulk_create(updated, update_conflicts=True, unique_fields=["annotator", "request_key"],
                                       update_fields=STORED_FIELDS)
        if answers:
            Annotation.objects.bulk_create(answers, ignore_conflicts=True)
            annotations_imported.send(sender=Annotation, task_id=run.task_id)


STORED_FIELDS = ("status", "finished_at", "answer", "attempts", "prompt_tokens", "completion_tokens", "reasoning",
                 "raw_outputs", "error", "failure_kind", "http_status", "latency_ms", "confidence")


# ------------------------------------------------------------------ executing a run (the Celery task calls this)


def acquire(run_id: int, token: uuid.UUID) -> str:
    """Take the run for this executor: "acquired", "inactive", "busy-run" (live executor) or "busy-annotator"."""
    with transaction.atomic():
        run = LLMRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status not in LLMRun.ACTIVE:
            return "inactive"
        # Serialise acquisitions per annotator, so two runs of one annotator never pass the check together.
        LLMAnnotatorConfig.objects.select_for_update().filter(annotator_id=run.annotator_id).first()
        fresh = stale_before()
        if run.executor_token and run.heartbeat_at and run.heartbeat_at >= fresh:
            return "busy-run"
        others = LLMRun.objects.filter(annotator_id=run.annotator_id, executor_token__isnull=False,
                                       heartbeat_at__gte=fresh).exclude(pk=run.pk)
        if others.exists():
            return "busy-annotator"
        now = timezone.now()
        run.status, run.executor_token, run.heartbeat_at = Status.RUNNING, token, now
        run.started_at = run.started_at or now
        run.save(update_fields=["status", "executor_token", "heartbeat_at", "started_at"])
    return "acquired"


def beat(run_id: int, token: uuid.UUID) -> str | None:
    """Heart-beat and read the status in one statement; None when another executor has taken the run over."""
    table = connection.ops.quote_name(LLMRun._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET heartbeat_at = %s WHERE id = %s AND executor_token = %s RETURNING status",
                       [timezone.now(), run_id, LLMRun._meta.get_field("executor_token").get_db_prep_value(
                           token, connection)])  # a uuid on PostgreSQL, 32 hex digits on SQLite
        row = cursor.fetchone()
    return row[0] if row else None


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


def execute_run(run_id: int) -> str:
    """Execute a slice of the run. Returns "done"; "continue" (enqueue again now); "wait" (retry later: another
    run of the annotator is executing, or items are claimed elsewhere); "busy-run" (a live executor has the
    run, or a dead one has not been silent long enough yet); or "gone" (nothing to do, or taken over)."""
    token = uuid.uuid4()
    verdict = acquire(run_id, token)
    if verdict == "inactive":
        return "gone"
    if verdict != "acquired":
        return "wait" if verdict == "busy-annotator" else verdict
    run = LLMRun.objects.select_related("annotator__llm_config", "task", "batch").get(pk=run_id)
    config = run.annotator.llm_config
    try:
        client = ChatClient(config.base_url, config.resolve_api_key(), timeout=config.timeout_seconds,
                            max_retries=config.max_retries, limiter=RateLimiter(config.requests_per_minute),
                            budget=budget_of(config))
    except MissingAPIKey as exc:
        return release(run, token, fatal_error=str(exc), exhausted=False)
    try:
        fatal_error, exhausted = drive(run, config, client, token)
    except Exception as exc:  # say why on the run page instead of leaving it to go stale
        log.exception("LLM run %s stopped on an error", run_id)
        release(run, token, fatal_error=f"the run stopped on an error: {type(exc).__name__}: {exc}", exhausted=False)
        raise
    return release(run, token, fatal_error=fatal_error, exhausted=exhausted)


def budget_of(config: LLMAnnotatorConfig) -> RequestBudget | None:
    """The endpoint's spend cap, when an admin set one (annotation/llm/spend.py)."""
    if config.max_requests is None:
        return None
    return RequestBudget(LLMAnnotatorConfig, config.pk, f"the LLM endpoint of {config.annotator.user.username}")


def drive(run: LLMRun, config: LLMAnnotatorConfig, client: ChatClient, token: uuid.UUID) -> tuple[str | None, bool]:
    """The executor loop: keep max_concurrency requests in flight and about twice as many claimed jobs queued
    behind them (`RequestPool`), store what finished, heart-beat, obey status. Claims are made a chunk ahead.

    Returns (fatal error or None, whether every item was looked at)."""
    items = pending_items(run)
    claimed: deque[tuple[Claim, Any]] = deque()  # (row, the item's payload), not sent yet
    fatal_error: str | None = None
    exhausted = False
    deadline = time.monotonic() + float(getattr(settings, "LLM_SLICE_SECONDS", 120.0))
    capacity = config.max_concurrency + QUEUED_PER_SLOT * (config.max_concurrency - 1)  # in flight + queued
    ask_one = partial(safe_ask, client, config, run.model, run.task,
                      examples=run_examples(run.task, config.confidence_samples))
    pool: RequestPool[Claim]
    with RequestPool(config.max_concurrency, ask_one, name=f"llm-run-{run.pk}", cleanup=client.close_async,
                     halts=lambda out: out.fatal) as pool:
        while True:
            status = beat(run.pk, token)
            accepting = status == Status.RUNNING and fatal_error is None and time.monotonic() < deadline
            if accepting:
                room = capacity - pool.outstanding
                if not exhausted and len(claimed) < room:
                    wanted = max(room - len(claimed), min(capacity, CLAIM_CHUNK))
                    chunk = list(islice(items, wanted))
                    exhausted = len(chunk) < wanted
                    payloads = {item.pk: item.payload for item in chunk}
                    claimed.extend((row, payloads[row.item_id]) for row in claim_many(run, token, chunk))
                while claimed and pool.outstanding < capacity:
                    pool.submit(*claimed.popleft())
            else:
                unsent = [*pool.withdraw(), *(row for row, _ in claimed)]
                unclaim(token, unsent)
                exhausted, claimed = exhausted and not unsent, deque()
            if not pool.outstanding and not claimed:
                return fatal_error, exhausted
            finished = pool.take(timeout=heartbeat_seconds(), gather=STORE_GATHER_SECONDS)
            store_many(run, token, finished)
            for _, out in finished:
                if out.fatal:
                    fatal_error = f"the endpoint refused the request ({out.error}); fix the configuration and resume"


# Claimed jobs queued per request in flight. The queue must outlast one turn of this loop (gather, store, beat,
# claim: ~100 ms at a thousand answers a second): with half a job per slot, at 256 in flight against a 200 ms
# endpoint, the queue ran dry between turns and the run reached 0.75-0.85× of the bound; with two, 0.84-0.89×.
# One slot fewer than in flight: a run with one request in flight asks strictly one item at a time, so a pause
# or a cancel starts no further request at all; a wider run may start those queued within one turn (the pool
# withdraws the rest at the turn's heart-beat, and a refused key stops the pool at once).
QUEUED_PER_SLOT = 2
CLAIM_CHUNK = 500  # rows claimed per statement once a run is large: fewer round trips, each still short
# How long the loop lets answers gather before storing them: a store costs ~10 ms (a commit) plus ~0.25 ms per
# answer, so at a thousand answers a second chunks of a few dozen kept the loop busy with commits alone.
STORE_GATHER_SECONDS = 0.05
STORE_CHUNK = 200  # answers per statement: its join grows faster than linearly past a few hundred


def unclaim(token: uuid.UUID, rows: list[Claim]) -> None:
    """Give back claims that were never sent (a pause, a fatal error, the end of a slice): a row this execution
    created is deleted, so the item is simply pending again; a row taken over keeps its history and, its
    executor gone, is taken over again by the next one."""
    if rows:
        LLMRequest.objects.filter(pk__in=[row.pk for row in rows], claimed_by=token,
                                  status=LLMRequest.Status.CLAIMED, attempts=0).delete()


def release(run: LLMRun, token: uuid.UUID, *, fatal_error: str | None, exhausted: bool) -> str:
    """Give the run back: completed when nothing is left, re-queued when a slice ended early."""
    with transaction.atomic():
        current = LLMRun.objects.select_for_update().get(pk=run.pk)
        if current.executor_token != token:
            return "gone"
        current.executor_token = None
        verdict = "done"
        if fatal_error:
            current.status, current.error, current.finished_at = Status.FAILED, fatal_error, timezone.now()
        elif current.status == Status.RUNNING:
            progress = run_progress(current)
            if exhausted and progress.done >= progress.total and progress.total and not progress.answered:
                current.status, current.finished_at = Status.FAILED, timezone.now()  # not one answer: no success
                current.error = failed_run_error(current, progress.failed)
            elif exhausted and progress.done >= progress.total:
                current.status, current.finished_at = Status.COMPLETED, timezone.now()
            else:  # the slice ended ("continue"), or items are still claimed elsewhere ("wait")
                current.status, verdict = Status.QUEUED, ("wait" if exhausted else "continue")
        current.save(update_fields=["executor_token", "status", "error", "finished_at"])
    return verdict


def failed_run_error(run: LLMRun, failed: int) -> str:
    """Why a run that got no answer at all failed: the count and the last request's error."""
    last = (run_requests(run).filter(status=LLMRequest.Status.FAILED).exclude(error="")
            .order_by("-pk").values_list("error", flat=True).first())
    if last and len(last) > 200:
        last = last[:200] + "…"
    return f"every request failed ({failed} item(s), none answered)" + (f"; the last error: {last}" if last else "")


def resumable_runs() -> list[tuple[int, float]]:
    """For a starting worker (hume/jobs/recovery.py): every queued or running run, at once. A worker that died
    took its run's message with it; a message for a run a live executor holds finds it busy and stops."""
    return [(run_id, 0.0) for run_id in LLMRun.objects.filter(status__in=LLMRun.ACTIVE).values_list("pk", flat=True)]


def stalled_runs() -> QuerySet[LLMRun]:
    """Runs that should be executing but have no live executor (their worker died, the message was lost,
    or a queued run simply waits for a free worker: a second message for it is harmless)."""
    return LLMRun.objects.filter(status__in=LLMRun.ACTIVE).exclude(
        executor_token__isnull=False, heartbeat_at__gte=stale_before())
