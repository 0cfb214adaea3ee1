"""Big dataset imports run by a worker, not inside the web request (issue 23: a 383 MB upload ran into the web
server's timeout and stored nothing).

An upload over IMPORT_IN_BACKGROUND_BYTES is copied to IMPORT_SPOOL_DIR in chunks (never whole in memory) under
a random name, an ImportJob row records it with its options, and `tasks_app.import_dataset` imports it with the
same `import_task` as the page, the API and the command: one transaction, so a bad file stores nothing, and
the same problems (file, line, field), which the job keeps. The options are checked in the request, so a bad
option is still a 400 at once. The stored copy is deleted when the job ends, either way.

With the broker down the stored file and the queued job wait: the job's message is kept in the job layer's
outbox and sent when the broker is back, and the job's page says "queued, the broker is down" (issue 35, item 5).

The job is a job-layer job (hume/jobs/): claimed with a conditional UPDATE (queued, a lapsed lease, or running
under this same message: a redelivery), its lease renewed while the import runs, re-queued by the one beat
entry when its worker died; the import is atomic, so nothing half-done is left. Progress
is the bytes read, written from a second database connection every PROGRESS_SECONDS, because the import's
own transaction is invisible to the page until it commits.
"""
from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path, PurePath
from typing import Any, BinaryIO

from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.db.models import Q

from hume import jobs
from hume.jobs import BrokerDown, control
from hume.jobs.lease import LeaseLost, claim
from hume.lib.import_reader import ImportFailed, ImportProblem

from .importing import import_task, parse_options
from .models import ImportJob

log = logging.getLogger(__name__)
PROGRESS_SECONDS = 1.0


def goes_to_background(upload: Any) -> bool:
    return (upload.size or 0) > settings.IMPORT_IN_BACKGROUND_BYTES


def start_import_job(upload: Any, raw_options: dict[str, Any], user: Any) -> ImportJob:
    """Check the options (raises ImportFailed naming each bad one), store the file, queue the job (after
    commit). The options are kept as sent (strings and booleans), and parsed again by the worker."""
    file_name = PurePath(upload.name or "upload").name
    options = {key: value for key, value in raw_options.items() if key != "file" and value is not None}
    parse_options(options, file_name)
    spool = Path(settings.IMPORT_SPOOL_DIR)
    spool.mkdir(parents=True, exist_ok=True)
    stored_as = uuid.uuid4().hex + (PurePath(file_name).suffix.lower()[:10] or "")
    with open(spool / stored_as, "wb") as copy:
        for chunk in upload.chunks():
            copy.write(chunk)
    job = ImportJob.objects.create(created_by=user if getattr(user, "pk", None) else None, file_name=file_name,
                                   stored_as=stored_as, size=upload.size or 0, options=options)
    try:
        jobs.enqueue_on_commit("tasks_app.import_dataset", job.pk)
    except BrokerDown as down:  # stored and queued: the job layer sends it when the broker is back
        control.explain(ImportJob.objects.filter(pk=job.pk), str(down))
        job.error = str(down)
    return job


class ProgressReader:
    """The stored file, counting the bytes read and writing the count to the job row now and then."""

    def __init__(self, stream: BinaryIO, job_id: int) -> None:
        self.stream, self.job_id, self.read_so_far, self.last = stream, job_id, 0, time.monotonic()
        self.name = getattr(stream, "name", "")

    def _count(self, data: bytes) -> bytes:
        self.read_so_far = max(self.read_so_far, self.stream.tell())
        if time.monotonic() - self.last >= PROGRESS_SECONDS:
            self.last = time.monotonic()
            report_progress(self.job_id, self.read_so_far)
        return data

    def read(self, size: int = -1) -> bytes:
        return self._count(self.stream.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._count(self.stream.readline(size))

    def __iter__(self):
        return iter(self.readline, b"")

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.stream.seek(offset, whence)

    def tell(self) -> int:
        return self.stream.tell()

    def readable(self) -> bool:
        return True


def report_progress(job_id: int, bytes_read: int) -> None:
    """Write the progress outside the import's transaction (a second connection, closed again). On SQLite the
    import holds the only write lock, so there the page shows no progress until the end."""
    connection = connections.create_connection("default")
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {ImportJob._meta.db_table} SET bytes_read = %s WHERE id = %s",
                           [bytes_read, job_id])
    except DatabaseError as exc:
        log.info("import job %s: progress not written (%s)", job_id, exc)
    finally:
        connection.close()


def run_import_job(job_id: int, claimed_by: str) -> str:
    """Import the job's stored file if this message wins the claim (the job layer's: a worker that died
    mid-import leaves a lapsed lease, and the next worker takes the job over); returns what happened.

    The import and the job's "done" are one transaction whose last write goes through the lease: a worker that
    lost its claim meanwhile rolls its import back, so a file is never imported twice."""
    mine = Q(status=ImportJob.Status.RUNNING, claimed_by=claimed_by) if claimed_by else None
    lease = claim(ImportJob.objects.filter(pk=job_id), claimed_by=claimed_by, may=mine,
                  max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "not claimed"
    job = ImportJob.objects.get(pk=job_id)
    path = Path(settings.IMPORT_SPOOL_DIR) / job.stored_as
    try:
        with lease.kept(), transaction.atomic():
            with open(path, "rb") as stored:
                summary = import_task(ProgressReader(stored, job.pk), job.file_name,
                                      parse_options(job.options, job.file_name))
            if not lease.finish(summary=summary.as_dict(), problems=[], bytes_read=job.size):
                raise LeaseLost(f"import job {job_id}: the claim was taken over")
    except ImportFailed as failed:
        lease.fail(f"{len(failed.problems)} problem(s)", problems=[problem.as_dict() for problem in failed.problems])
        result = f"failed: {len(failed.problems)} problem(s)"
    except FileNotFoundError:
        problem = ImportProblem(job.file_name, None, None, "the stored upload is gone (was the import folder "
                                "IMPORT_SPOOL_DIR cleared, or is it not shared with the workers?); upload again")
        lease.fail(problem.message, problems=[problem.as_dict()])
        return "failed: stored file missing"
    except LeaseLost:
        return "discarded: the claim was taken over (its import rolled back)"
    else:
        result = f"done: task {summary.task_id}, {summary.added} added"
    path.unlink(missing_ok=True)
    return result
