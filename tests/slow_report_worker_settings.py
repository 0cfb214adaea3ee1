"""Settings for a test worker whose report runs pause between reading the answers and storing the result
(and whose SAGE runs, retrieval evaluations, split-ranking chunks, escalation plans and PPI estimates pause before
they compute, whose LLM runs pause after their third answer, and whose BM25 rankings pause inside the transaction
that writes them, after their entries are written and before it commits).

Tests watch a run in progress (the page's progress bar, an answer arriving meanwhile) or kill its worker
mid-run. Production code has no such pause: it is added here, by a Celery signal connected only when a
test worker runs with these settings (conftest's `start_worker(report_pause=...)`). The pause wraps
`reports.fresh_result_exists`, the run's first step after it has read its answers and said so (stage
"answers read", 25%), exactly where a slow report spends its time scoring.
"""
import os
import time
from typing import Any

from celery.signals import task_prerun

from hume.settings import *  # noqa: F403

REPORT_PAUSE_SECONDS = float(os.environ.get("HUME_TEST_REPORT_PAUSE", "3"))


@task_prerun.connect
def pause_report_runs(**kwargs: Any) -> None:
    """Before the first task of each worker process (Django is set up by then), wrap the step once."""
    from agreement.core import reports

    original = reports.fresh_result_exists
    if getattr(original, "pauses", False):
        return

    def paused(*args: Any, **kwargs: Any) -> bool:
        time.sleep(REPORT_PAUSE_SECONDS)
        return original(*args, **kwargs)

    paused.pauses = True
    reports.fresh_result_exists = paused
    pause_other_jobs()


def pause_other_jobs() -> None:
    """The same pause in a SAGE run (before its study runs), a retrieval evaluation (before it scores), a
    split ranking's chunk (before it ranks), an escalation plan and a PPI estimate (before they compute), so
    tests/test_job_worker_kill.py can kill their worker mid-run."""
    from agreement.escalation import plan_jobs as escalation_jobs
    from agreement.ppi import estimate_jobs as ppi_jobs
    from agreement.retrieval import evaluations as retrieval_reports
    from agreement.retrieval import split_rankings
    from agreement.sage import study_jobs as sage_jobs

    for module, name in ((sage_jobs, "run_study"), (retrieval_reports, "evaluate_collection"),
                         (split_rankings, "rank_chunk"), (escalation_jobs, "escalation_plan"),
                         (ppi_jobs, "ppi_document")):
        original = getattr(module, name)

        def paused(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            time.sleep(REPORT_PAUSE_SECONDS)
            return _original(*args, **kwargs)

        setattr(module, name, paused)
    pause_llm_runs()
    pause_bm25_rankings()


def pause_llm_runs() -> None:
    """An LLM run pauses once, holding its lease, before it claims the next item after its third answer: with
    one request in flight at most, nothing is in flight then, so a kill there loses no request already sent."""
    from annotation.llm import run_executor
    from annotation.llm.models import LLMRequest

    original = run_executor.claim_many
    paused_runs: set[int] = set()

    def paused(run: Any, lease: Any, items: Any) -> Any:
        answered = LLMRequest.objects.filter(run=run, status=LLMRequest.Status.SUCCEEDED).count()
        if answered >= 3 and run.pk not in paused_runs:
            paused_runs.add(run.pk)
            time.sleep(REPORT_PAUSE_SECONDS)
        return original(run, lease, items)

    run_executor.claim_many = paused


def pause_bm25_rankings() -> None:
    """A BM25 ranking pauses inside the transaction that writes it, after its entries and before the commit."""
    from agreement.retrieval import actions as retrieval_actions

    def store_then_pause(*args: Any, _store: Any = retrieval_actions.store_bm25_ranking, **kwargs: Any) -> None:
        _store(*args, **kwargs)
        time.sleep(REPORT_PAUSE_SECONDS)

    retrieval_actions.store_bm25_ranking = store_then_pause
