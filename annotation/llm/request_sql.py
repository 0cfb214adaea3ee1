"""The request log's two hot statements on PostgreSQL: claiming a chunk of items and storing a chunk of answers.

Why plain SQL: at hundreds of requests in flight the executor's loop claims and stores about a thousand rows
a second, and the ORM's per-row model instances, per-value adaptation and the SELECT ... FOR UPDATE before
each store cost more than a millisecond per pair (the loop could not keep up with a 200 ms endpoint). Here a
chunk is one statement each way, the claims' columns passed as arrays (`unnest`), the answers as one JSON
document (`jsonb_to_recordset`: quoting a dozen arrays cost the loop's thread more than the statement), and the
store is a single
UPDATE ... FROM whose RETURNING rows feed the INSERT of the annotations in the same statement. The store is fenced
by the run's lease inside that statement: it renews the lease on the run row only where the claim token is still
the holder's, and stores nothing when that UPDATE found no row (another worker holds the run now; a claim in
progress waits for the statement, as for `Lease.fenced()`, at one round trip instead of three). The UPDATE also
names its rows with `id = ANY(...)`, and the answers are unnested once (a MATERIALIZED CTE): on fresh statistics
PostgreSQL joined a chunk of under ~200 answers to the request log in a nested loop over a sequential scan (2-3
ms per answer instead of 0.3 ms, growing with the log), or re-ran the unnest for every row; now the rows come
from the primary key whatever the statistics say. The rules are
the ORM path's (`request_claims.claim_many` / `request_claims.store_many` keep it for other databases): a claim is
an INSERT that the unique (annotator, request key) decides; an answer is stored only on a row still claimed by
this lease, and the annotation is inserted ON CONFLICT DO NOTHING on the unique (item, annotator).
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from django.db import connection

from annotation.core.models import Annotation
from annotation.llm.models import LLMRequest, LLMRun
from hume.jobs.lease import Lease


def _table(model: type[Any]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def insert_claims(run: LLMRun, token: uuid.UUID, now: datetime, keys: dict[str, int]) -> dict[str, int]:
    """INSERT a claimed row per request key (→ item id) that has none; {key: new row id} of those inserted."""
    sql = f"""
        INSERT INTO {_table(LLMRequest)} (annotator_id, request_key, item_id, run_id, model, prompt_version, status,
            claimed_by, claimed_at, attempts, prompt_tokens, completion_tokens, reasoning, raw_outputs,
            failure_kind, error)
        SELECT %s, k.key, k.item, %s, %s, %s, %s, %s, %s, 0, 0, 0, '', '[]'::jsonb, '', ''
        FROM unnest(%s::text[], %s::bigint[]) AS k(key, item)
        ON CONFLICT (annotator_id, request_key) DO NOTHING
        RETURNING request_key, id"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [run.annotator_id, run.pk, run.model, run.prompt_version, LLMRequest.Status.CLAIMED,
                             token, now, list(keys), list(keys.values())])
        return dict(cursor.fetchall())


def store_outcomes(run: LLMRun, lease: Lease, now: datetime, outcomes: list[tuple[int, Any]]) -> tuple[bool, int]:
    """Store (row id, Outcome) pairs on the rows still claimed by the lease's token, and the valid answers as
    annotations, in one statement; the run's counters go with the lease's renewal (the job layer's statement,
    `Lease.renewing_sql`) in the same statement, which stores nothing unless the run's claim is still the
    lease's. Returns (whether the run is still held by the lease, how many answers were inserted)."""
    token = lease.token
    counted, renewal = lease.renewing_sql(
        "http_requests = http_requests + %s, prompt_tokens = prompt_tokens + %s, "
        "completion_tokens = completion_tokens + %s")
    rows = [{"id": pk, "status": LLMRequest.Status.SUCCEEDED if out.ok else LLMRequest.Status.FAILED,
             "answer": json.dumps(out.value) if out.ok else None, "attempts": out.attempts,
             "prompt": out.prompt_tokens, "completion": out.completion_tokens, "reasoning": out.reasoning,
             "raw": json.dumps(out.raw_outputs), "error": out.error, "kind": out.failure_kind,
             "http": out.http_status, "latency": out.latency_ms,
             "confidence": out.confidence if out.ok else None} for pk, out in outcomes]
    sql = f"""
        WITH v AS MATERIALIZED (
            SELECT * FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, status text, answer text, attempts int,
                prompt int, completion int, reasoning text, raw text, error text, kind text, http int, latency int,
                confidence double precision)),
        counted AS ({counted}),
        stored AS (
            UPDATE {_table(LLMRequest)} AS r SET status = v.status, finished_at = %s, answer = v.answer::jsonb,
                attempts = r.attempts + v.attempts, prompt_tokens = r.prompt_tokens + v.prompt,
                completion_tokens = r.completion_tokens + v.completion, reasoning = v.reasoning,
                raw_outputs = r.raw_outputs || v.raw::jsonb, error = v.error, failure_kind = v.kind,
                http_status = v.http, latency_ms = v.latency, confidence = v.confidence
            FROM v WHERE r.id = v.id AND r.id = ANY(%s::bigint[]) AND r.claimed_by = %s AND r.status = %s
                AND EXISTS (SELECT 1 FROM counted)
            RETURNING r.item_id, r.answer, r.claimed_at, r.latency_ms, r.status, r.confidence),
        inserted AS (
            INSERT INTO {_table(Annotation)} (item_id, annotator_id, batch_id, value, skipped, skip_reason, flagged,
                flag_comment, started_at, submitted_at, updated_at, time_spent_ms, source, confidence)
            SELECT item_id, %s, %s, answer, false, '', false, '', claimed_at, %s, %s, latency_ms, 'llm', confidence
            FROM stored WHERE status = %s
            ON CONFLICT (item_id, annotator_id) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM counted), (SELECT count(*) FROM inserted)"""
    outs = [out for _, out in outcomes]
    params = [json.dumps(rows), sum(o.attempts for o in outs), sum(o.prompt_tokens for o in outs),
              sum(o.completion_tokens for o in outs), *renewal, now, [pk for pk, _ in outcomes],
              token, LLMRequest.Status.CLAIMED, run.annotator_id, run.batch_id, now, now, LLMRequest.Status.SUCCEEDED]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        held, inserted = cursor.fetchone()
    return bool(held), inserted
