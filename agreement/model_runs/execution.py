"""Model runs: create one per (task, model, inputs), split it into chunks, embed the chunks, score the run.

The same functions run in a Celery worker (agreement/model_runs/tasks.py) and in `run_models --wait`.
Chunks are jobs of the job layer (hume/jobs/): a conditional UPDATE decides who works, so a redelivered
message, a second worker or a re-run command is harmless; the lease is renewed while a chunk embeds, so a
chunk whose worker died is re-claimed once its lease (JOB_LEASE_SECONDS) lapses, not after a fixed five
minutes; the texts that worker had already embedded are cached, so they are not encoded again. A chunk is
claimed at most JOB_MAX_ATTEMPTS times: one whose workers keep dying (or hanging past the lease) on it
fails its run, with the reason, instead of being re-claimed for ever (issue 23, item 3).
"""
from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, QuerySet, Value, When

from agreement.model_runs import evaluate as ev
from agreement.model_runs.backends import BackendError, device_of
from agreement.model_runs.device import add_device
from agreement.model_runs.embedding import vectors_by_text
from agreement.model_runs.endpoint import BadVectors
from agreement.model_runs.models import EmbeddingModel, ModelRun, Prediction, RunChunk
from agreement.model_runs.stages import timed
from annotation.models import Annotation
from hume import jobs
from hume.jobs import control
from hume.jobs.lease import Lease, LeaseLost, claim, claim_batch, lease_seconds
from hume.lib.collector import collector_paused
from hume.lib.http_client import EndpointError, ProtocolError
from hume.lib.sql import values_with_json
from measures.model_scoring import CannotScore
from tasks_app.models import Item, ItemGold, Task

RUN_ERRORS = (BackendError, BadVectors, EndpointError, ProtocolError, ev.UnsupportedKind)


Inputs = tuple[list[tuple[int, dict[str, Any]]], dict[int, Any], dict[int, list[Any]]]


def load_inputs(task: Task) -> Inputs:
    """Items (id, payload) in order, gold by item id, and the human answers by item id: three queries, each
    one's JSON decoded in one call (`values_with_json`)."""
    items = values_with_json(Item.objects.in_pool().filter(task=task).order_by("position"), "id",
                             json_field="payload")
    gold = dict(values_with_json(ItemGold.objects.filter(item__task=task), "item_id", json_field="value"))
    humans: dict[int, list[Any]] = {}
    rows = Annotation.objects.counted().filter(item__task=task, skipped=False, value__isnull=False,
                                     annotator__agent="human").order_by("item_id", "annotator_id")
    for item_id, value in values_with_json(rows, "item_id", json_field="value"):
        humans.setdefault(item_id, []).append(value)
    return items, gold, humans


# 2: MTEB's own protocols (mteb 2.20.0): classification undersampled per fold, instructions after the query,
#    a query with no relevant candidate counted as 0, reranking's map_at_1000. A run scored before is not reused.
SCORING_VERSION = 2


def inputs_digest(items: list[tuple[int, Any]], gold: dict[int, Any], humans: dict[int, list[Any]],
                  protocol: str = "mteb") -> str:
    """sha256 over the items, gold, human answers, the protocol and the scoring version."""
    doc = [SCORING_VERSION, protocol, [[p, gold.get(i), humans.get(i, [])] for i, p in items]]
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def chunk_items(kind: str, items: list[tuple[int, dict[str, Any]]], size: int) -> list[list[int]]:
    chunks: list[list[int]] = [[]]
    count = 0
    texts_of = ev.evaluation_of(kind).item_texts
    for item_id, payload in items:
        if count >= size:
            chunks.append([])
            count = 0
        chunks[-1].append(item_id)
        count += len(texts_of(payload))
    return [c for c in chunks if c]


@collector_paused()  # bulk steps of acyclic objects: hume/lib/collector.py
@transaction.atomic
def start_run(task: Task, model: EmbeddingModel, *, chunk_texts: int | None = None,
              protocol: str = "mteb") -> ModelRun:
    """The run of this model on the task's current inputs under `protocol` ("mteb", or "pooled" for
    classification, measures/model_scoring.py): an existing one (a failed one is reset), or new.

    The returned instance carries the inputs it was keyed on (`run.inputs`, not stored), so run_in_process
    reads the items once, not again for the chunks and the scoring (20,000 JSON payloads each time)."""
    ev.check_supported(task.kind, model)
    ev.check_protocol(task.kind, protocol)
    items, gold, humans = load_inputs(task)
    if not items:
        raise ev.UnsupportedKind(f"task {task.name} has no items to run a model on")
    digest = inputs_digest(items, gold, humans, protocol)
    run, created = ModelRun.objects.get_or_create(task=task, model=model, inputs_digest=digest,
                                                  defaults={"protocol": protocol})
    if created:
        size = chunk_texts or settings.MODEL_RUN_CHUNK_TEXTS
        chunks = chunk_items(task.kind, items, size) if model.is_encoder else []
        RunChunk.objects.bulk_create([RunChunk(run=run, index=n, item_ids=c) for n, c in enumerate(chunks)])
        ModelRun.objects.filter(pk=run.pk).update(chunks_total=len(chunks))
    elif run.status == ModelRun.Status.FAILED:
        control.submit(ModelRun.objects.filter(pk=run.pk), finished_at=None)
        # a fresh start: each unfinished chunk gets its attempts again
        control.submit(RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE))
    run.refresh_from_db()
    run.inputs = (items, gold, humans)
    return run


class OutOfAttempts(Exception):
    """A chunk was claimed JOB_MAX_ATTEMPTS times and no worker finished it."""


def claim_chunk(chunk_id: int) -> Lease | None:
    """The job layer's claim of a chunk of a run still embedding (capped: one out of attempts fails, and then
    its run: give_up_if_out_of_attempts)."""
    return claim(RunChunk.objects.filter(pk=chunk_id, run__status=ModelRun.Status.QUEUED))


def give_up_if_out_of_attempts(chunk_id: int) -> bool:
    """Fail the run of a chunk that may not be claimed again (every attempt's lease lapsed); True if so."""
    chunk = RunChunk.objects.filter(pk=chunk_id).select_related("run").first()
    if chunk is None:
        return False
    run = chunk.run
    return control.fail_parent_of_exhausted(ModelRun.objects.filter(pk=run.pk), RunChunk.objects.filter(pk=chunk_id), (
        lambda c: str_error(OutOfAttempts(
            f"chunk {c.index + 1} of {run.chunks_total} was taken {c.attempts} times and never finished "
            f"(its worker stopped, or hung past the {settings.JOB_LEASE_SECONDS:g}-second lease, each time); "
            f"the run stops here: start it again once the cause is fixed"))))


# A run's vectors this process embedded, kept for its scoring when the same process scores it (run_models
# --wait, one worker): reading 40,000 vectors back from the cache cost more than a GPU took to encode them.
# Bounded: past HELD_BYTES the oldest runs' are dropped, and their scoring reads the cache as before.
HELD_BYTES = 256 * 2**20
_held: dict[int, dict[str, np.ndarray]] = {}


def held_vectors(run_id: int) -> dict[str, np.ndarray]:
    """{text: vector} held for a run (a new, empty one first), after dropping what is over the bound."""
    held = _held.setdefault(run_id, {})
    sizes = {run: len(vectors) * next(iter(vectors.values())).nbytes for run, vectors in _held.items() if vectors}
    for run in list(_held):
        if sum(sizes.values()) <= HELD_BYTES:
            break
        sizes.pop(run, None)
        _held.pop(run).clear()
    return _held.setdefault(run_id, held)


def chunk_payloads(task_id: int, item_ids: list[int]) -> dict[int, dict[str, Any]]:
    """{item id: payload} of a chunk's items. Items imported in order have consecutive ids, read as one range
    of the task's (a `pk IN (…)` of 20,000 ids took SQLite seconds); scattered ids are read in batches."""
    wanted = set(item_ids)
    low, high = min(item_ids), max(item_ids)
    if high - low < 2 * len(wanted):
        rows = Item.objects.filter(task_id=task_id, pk__gte=low, pk__lte=high).values_list("id", "payload")
        return {i: p for i, p in rows if i in wanted}
    payloads: dict[int, dict[str, Any]] = {}
    for start in range(0, len(item_ids), 2000):
        payloads.update(Item.objects.filter(pk__in=item_ids[start:start + 2000]).values_list("id", "payload"))
    return payloads


def write_predictions(run_id: int, predictions: dict[int, dict[str, Any]]) -> None:
    """Replace a run's predictions ({item id: {target: value}}) in one statement: the whole map written as one
    JSON document by one json.dumps, and the database's own JSON reader (SQLite's json_each, PostgreSQL's
    jsonb_each) turns it into a row per item, each value the JSON text the JSONField stores. A value JSON cannot
    hold (NaN) falls back to one INSERT per row run with `executemany`, each value by json.dumps as before;
    encoding 20,000 values one call each, and binding 20,000 rows, cost more than the scoring."""
    from django.db import connection

    Prediction.objects.filter(run_id=run_id).delete()
    meta, quote = Prediction._meta, connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in ("run", "item", "value"))
    table = quote(meta.db_table)
    postgresql = connection.vendor == "postgresql"
    try:
        document = json.dumps({str(item_id): value for item_id, value in predictions.items()}, allow_nan=False)
    except ValueError:
        document = None
    with connection.cursor() as cursor:
        if document is not None and all(isinstance(v, dict) for v in predictions.values()):
            each = ("SELECT %s, key::bigint, value FROM jsonb_each(%s::jsonb)" if postgresql
                    else "SELECT %s, CAST(key AS INTEGER), value FROM json_each(%s)")
            cursor.execute(f"INSERT INTO {table} ({columns}) {each}", [run_id, document])
            return
        as_json = "%s::jsonb" if postgresql else "%s"
        dumps = json.JSONEncoder().encode  # json.dumps's defaults, as the JSONField writes a value
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, {as_json})",
                           [(run_id, item_id, dumps(v)) for item_id, v in predictions.items()])


@collector_paused()  # bulk steps of acyclic objects: hume/lib/collector.py
def execute_chunk(chunk_id: int, inputs: Inputs | None = None, payloads_by_id: dict[int, Any] | None = None, *,
                  score: bool = True) -> str:
    """Claim a chunk, embed its uncached texts, mark it done; score the run if it was the last one.
    inputs, payloads_by_id: the run's inputs and {item id: payload}, when this process has them
    (run_in_process); else the chunk's items and the scoring's inputs are read from the database.
    score: False when the caller knows chunks remain and will ask for the scoring itself (run_in_process)."""
    with timed("read"):
        lease = claim_chunk(chunk_id)
        if lease is None:
            return "failed" if give_up_if_out_of_attempts(chunk_id) else "taken"
        chunk = RunChunk.objects.select_related("run__task", "run__model").get(pk=chunk_id)
        run = chunk.run
        known_payloads = payloads_by_id or {}
        payloads = (known_payloads if all(i in known_payloads for i in chunk.item_ids)
                    else chunk_payloads(run.task_id, chunk.item_ids))
        texts_of = ev.evaluation_of(run.task.kind).item_texts
        texts = [t for i in chunk.item_ids for t in texts_of(payloads[i])]
    stats: dict[str, int] = {}
    try:
        with lease.kept():
            device = device_of(run.model)
            held = held_vectors(run.pk)
            held.update(vectors_by_text(run.model, [t for t in dict.fromkeys(texts) if t not in held], stats=stats))
    except RUN_ERRORS as exc:
        _held.pop(run.pk, None)
        fail(run, exc)
        lease.release()
        return "failed"
    try:
        with timed("chunk done"), lease.fenced():  # the chunk done and the run's counts in one transaction
            lease.finish(encoded=stats.get("encoded", 0))
            ModelRun.objects.filter(pk=run.pk).update(chunks_done=F("chunks_done") + 1,
                                                      texts_encoded=F("texts_encoded") + stats.get("encoded", 0))
        if device not in run.device.split(","):  # recorded already by an earlier chunk: no query
            add_device(ModelRun, run.pk, device)
    except LeaseLost:
        pass  # another worker took the chunk over (our lease lapsed): its count stands, not ours
    return (score_if_ready(run.pk, inputs) if score else None) or "done"


@collector_paused()  # bulk steps of acyclic objects: hume/lib/collector.py
def execute_batch(run: ModelRun, chunk_ids: list[int], inputs: Inputs | None = None,
                  payloads_by_id: dict[int, Any] | None = None) -> int | None:
    """Claim those of the run's chunks `chunk_ids` that are claimable, in one claim (`claim_batch`), embed their
    uncached texts in one pass (the cache's slices written as they are encoded, so a killed batch keeps each
    finished slice), and mark them done together, each with the texts it encoded: what `execute_chunk` does for
    one, with its statements once per batch instead of once per chunk. The number of chunks claimed; None
    when none was (other workers hold them, or they are out of attempts: `execute_chunk` says which)."""
    with timed("read"):
        lease = claim_batch(RunChunk.objects.filter(pk__in=chunk_ids, run__status=ModelRun.Status.QUEUED),
                            len(chunk_ids))
        if lease is None:
            return None
        item_ids_of = dict(RunChunk.objects.filter(pk__in=lease.pks).values_list("id", "item_ids"))
        wanted = [i for chunk_id in lease.pks for i in item_ids_of[chunk_id]]
        payloads = payloads_by_id or {}
        if not all(i in payloads for i in wanted):
            payloads = chunk_payloads(run.task_id, wanted)
        texts_of = ev.evaluation_of(run.task.kind).item_texts
        texts = {chunk_id: [t for i in item_ids_of[chunk_id] for t in texts_of(payloads[i])] for chunk_id in lease.pks}
    encoded: set[str] = set()
    try:
        with lease.kept():
            device = device_of(run.model)
            held = held_vectors(run.pk)
            new = [t for t in dict.fromkeys(t for chunk in texts.values() for t in chunk) if t not in held]
            held.update(vectors_by_text(run.model, new, encoded=encoded))
    except RUN_ERRORS as exc:
        _held.pop(run.pk, None)
        fail(run, exc)
        lease.release()
        return len(lease.pks)
    by_chunk: dict[int, int] = {}
    for chunk_id, chunk_texts in texts.items():  # a text encoded counts for the first chunk that has it
        first = encoded.intersection(chunk_texts)
        encoded -= first
        by_chunk[chunk_id] = len(first)
    try:
        with timed("chunk done"), lease.fenced():  # the chunks done and the run's counts in one transaction
            lease.finish(encoded=Case(*(When(pk=c, then=Value(n)) for c, n in by_chunk.items() if n),
                                      default=Value(0)))
            ModelRun.objects.filter(pk=run.pk).update(chunks_done=F("chunks_done") + len(lease.pks),
                                                      texts_encoded=F("texts_encoded") + sum(by_chunk.values()))
        if device not in run.device.split(","):
            add_device(ModelRun, run.pk, device)
    except LeaseLost:
        pass  # one of the chunks was taken over (our lease lapsed): the new holder finishes it
    return len(lease.pks)


def batch_size(chunks: int, seconds: float, largest: int) -> int:
    """Chunks to claim next, after `chunks` took `seconds`: as many as the last batch's pace finishes in a sixth
    of a lease (JOB_LEASE_SECONDS), so a fast encoder (a GPU) claims a run's chunks a few times, not once each,
    while a killed process's batch is free again within a lease; between 1 and `largest`."""
    per_chunk = max(seconds / max(chunks, 1), 1e-6)
    return max(1, min(largest, int(lease_seconds() / 6 / per_chunk)))


def str_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def fail(run: ModelRun, exc: Exception) -> None:
    """Fail the run with the reason (a scoring step that held it loses its claim: it stores nothing)."""
    control.fail(ModelRun.objects.filter(pk=run.pk), str_error(exc))


def claim_scoring(run_id: int) -> Lease | None:
    """The job layer's claim of the run's scoring step: a queued run whose chunks are all done, or one whose
    scoring worker stopped renewing its lease. Claimed JOB_MAX_ATTEMPTS times without finishing, it fails."""
    return claim(ModelRun.objects.filter(pk=run_id, chunks_done__gte=F("chunks_total")),
                 max_attempts=settings.JOB_MAX_ATTEMPTS)


def score_if_ready(run_id: int, inputs: Inputs | None = None) -> str | None:
    lease = claim_scoring(run_id)
    if lease is None:
        return None
    with lease.kept():
        return score_run(run_id, lease, inputs)


@collector_paused()  # bulk steps of acyclic objects: hume/lib/collector.py
def score_run(run_id: int, lease: Lease, inputs: Inputs | None = None) -> str:
    """Score against gold and against the humans' consensus; store scores and predictions in one transaction.
    inputs: those the run was started on, when this process has them (start_run's `run.inputs`)."""
    with timed("score read"):
        run = ModelRun.objects.select_related("task", "model").get(pk=run_id)
        kind = run.task.kind
        items, gold, humans = inputs or load_inputs(run.task)
    targets = {"gold": {i: ev.gold_truth(kind, g) for i, g in gold.items()},
               "humans": {i: ev.consensus(kind, a) for i, a in humans.items()}}
    scores: dict[str, Any] = {"model": run.model.describe(), "kind": kind, "protocol": run.protocol}
    predictions: dict[int, dict[str, Any]] = {}
    access = ev.ModelAccess(run.model, _held.pop(run_id, {}))  # this process's vectors; both targets share it
    try:
        with timed("evaluate"):
            for target, truth in targets.items():
                try:
                    scores[target], by_item = ev.evaluate(kind, run.model, items, truth, run.protocol,
                                                             access=access)
                except CannotScore as exc:
                    scores[target] = {"main_score": None, "reason": str(exc)}
                    continue
                scores[target]["too_few_items"] = ev.too_few_items(kind, list(truth.values()))
                for item_id, value in by_item.items():
                    predictions.setdefault(item_id, {})[target] = value
    except RUN_ERRORS as exc:
        fail(run, exc)
        return "failed"
    if not run.model.is_encoder:
        add_device(ModelRun, run.pk, device_of(run.model))
    model_on_gold = {i: p["gold"] for i, p in predictions.items() if "gold" in p}
    with timed("significance"):
        scores["significance"] = ev.compare(kind, dict(items), gold, targets["humans"], model_on_gold)
    with timed("predictions write"), transaction.atomic():
        finished = lease.finish(scores=scores)  # only while the claim is ours (a failed run's is not)
        if finished:
            write_predictions(run_id, predictions)
    return "scored" if finished else "taken"


def holding_chunk(chunk_id: int) -> QuerySet:
    """The chunk, while its run still embeds (another worker's claim on it is waited for, then taken over)."""
    return RunChunk.objects.filter(pk=chunk_id, run__status=ModelRun.Status.QUEUED)


def unfinished_chunks(run: ModelRun) -> list[int]:
    return list(run.chunks.exclude(status=RunChunk.Status.DONE).values_list("id", flat=True))


def run_in_process(run: ModelRun, *, poll: float = 0.5, timeout: float = 3600) -> ModelRun:
    """What a worker does, here: every claimable chunk, then the scoring; waits for chunks other workers hold.
    A run from start_run brings its inputs (`run.inputs`): the chunks and the scoring use them. Chunks are
    claimed in batches (`execute_batch`) sized by the pace of the last one (`batch_size`): one chunk first,
    then as many as a sixth of a lease allows."""
    deadline = time.monotonic() + timeout
    inputs = getattr(run, "inputs", None)
    payloads_by_id = dict(inputs[0]) if inputs else None
    size = 1  # the first batch is one chunk, to measure the encoder's pace
    while True:
        run.refresh_from_db()
        if run.status in (ModelRun.Status.DONE, ModelRun.Status.FAILED):
            return run
        pending = unfinished_chunks(run)
        while pending and run.status == ModelRun.Status.QUEUED:
            ids, pending = pending[:size], pending[size:]
            started = time.perf_counter()
            claimed = execute_batch(run, ids, inputs, payloads_by_id)
            if claimed is None:  # held by other workers or out of attempts: one by one, as a worker asks
                for chunk_id in ids:
                    execute_chunk(chunk_id, inputs, payloads_by_id, score=False)
            else:
                size = batch_size(claimed, time.perf_counter() - started, len(pending) or 1)
            run.refresh_from_db(fields=["status", "device"])
        score_if_ready(run.pk, inputs)
        run.refresh_from_db()
        if run.status in (ModelRun.Status.DONE, ModelRun.Status.FAILED):
            return run
        if time.monotonic() > deadline:
            raise TimeoutError(f"run {run.pk} did not finish within {timeout:g}s")
        time.sleep(poll)


def enqueue(run: ModelRun) -> int:
    """Queue a Celery task per unfinished chunk (or the scoring) after commit; never run inline."""
    pending = unfinished_chunks(run)
    if pending:
        for chunk_id in pending:
            jobs.enqueue_on_commit("model_runs.embed_chunk", chunk_id)
    elif run.status != ModelRun.Status.DONE:
        jobs.enqueue_on_commit("model_runs.score_run", run.pk)
    return len(pending)

