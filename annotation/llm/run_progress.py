"""How far an LLM run got: its items, its request rows, and the counts the run page and the executor read.

A run's items are the batch's, or the task's pool; "answered" counts the annotator's annotations on them (from
this run or an earlier one: an answer is never bought twice), "failed" the items whose request failed with this
model and prompt version. The counts are planned with hash joins (`without_nested_loops`) because they run
right after an import, when PostgreSQL's statistics are still wrong.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Q, QuerySet

from annotation.core.models import Annotation, Batch
from annotation.llm.models import LLMRequest, LLMRun
from tasks_app.models import Item, Task


def run_items(task: Task, batch: Batch | None) -> QuerySet[Item]:
    """The items a run answers, in the order annotators see them; payload only, never gold."""
    if batch is not None:
        items = Item.objects.filter(batch_items__batch=batch).order_by("batch_items__position")
    else:
        items = Item.objects.filter(task=task).in_pool().order_by("position")
    return items.only("id", "uid", "payload", "task_id")


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


def failed_run_error(run: LLMRun, failed: int) -> str:
    """Why a run that got no answer at all failed: the count and the last request's error."""
    last = (run_requests(run).filter(status=LLMRequest.Status.FAILED).exclude(error="")
            .order_by("-pk").values_list("error", flat=True).first())
    if last and len(last) > 200:
        last = last[:200] + "…"
    return f"every request failed ({failed} item(s), none answered)" + (f"; the last error: {last}" if last else "")
