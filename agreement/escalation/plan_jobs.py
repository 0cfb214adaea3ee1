"""Asking for an escalation plan and computing it in a worker: the page never computes inside a request.

`ask` checks what can be checked at once (the judges exist, are LLM annotators with confidences; α and δ in
(0, 1)), so bad input stores nothing; `execute` claims the row through the job layer (hume/jobs/lease.py: one
conditional UPDATE), so a message delivered twice computes once, and runs the `escalate` command's own code
(`loading.escalation_plan`). The lease is renewed while it computes; a worker killed meanwhile leaves a lease that
lapses, and the layer sends the plan to another worker, which computes it again from its seed (the same plan).
`create_batch` makes the human batch of exactly the escalated items, once per plan.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from agreement.escalation.escalation_loading import (
    alt_test_for_task,
    create_escalation_batch,
    escalation_plan,
    find_judges,
)
from agreement.escalation.models import EscalationPlan
from agreement.escalation.plan import EscalationProblem
from annotation.models import Batch
from hume import jobs
from hume.jobs.lease import claim
from measures.escalation.calibration import check_levels
from tasks_app.models import Task


def ask(task: Task, judges: list[str], alpha: float, delta: float, *, n_calibration: int | None = None,
        tolerance: float | None = None, epsilon: float = 0.2, user: Any = None) -> EscalationPlan:
    """Check the input (EscalationProblem, nothing stored), store the plan and queue it after commit."""
    try:
        check_levels(alpha, delta)
    except ValueError as error:
        raise EscalationProblem(str(error)) from None
    find_judges(task, judges)
    plan = EscalationPlan.objects.create(task=task, judges=judges, alpha=alpha, delta=delta,
                                         n_calibration=n_calibration, tolerance=tolerance, alt_test_epsilon=epsilon,
                                         created_by=user)
    jobs.enqueue_on_commit("escalation.compute_plan", plan.pk)
    return plan


def execute(plan_id: int, claimed_by: str = "") -> str:
    """Compute and store the plan if this call wins its claim: "done", "failed" (the reason on the row), or
    "taken" (another worker holds it, it is finished, or this worker lost it meanwhile)."""
    lease = claim(EscalationPlan.objects.filter(pk=plan_id), claimed_by=claimed_by,
                  max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "taken"
    row = EscalationPlan.objects.select_related("task").get(pk=plan_id)
    try:
        with lease.kept():
            plan = escalation_plan(row.task, row.judges, row.alpha, row.delta, n_calibration=row.n_calibration,
                                   tolerance=row.tolerance, seed=row.seed)
            alt_tests = [alt_test_summary(row.task, judge, row.alt_test_epsilon) for judge in row.judges]
    except EscalationProblem as error:
        return "failed" if lease.fail(str(error)) else "taken"
    except Exception as exc:  # say why on the page, then let the worker log it
        lease.fail(f"{type(exc).__name__}: {exc}")
        raise
    stored = lease.finish(result={**plan.result, "escalated_item_ids": plan.escalated}, alt_tests=alt_tests)
    return "done" if stored else "taken"


def alt_test_summary(task: Task, judge: str, epsilon: float) -> dict[str, Any]:
    """The test's verdict for the page, or why it could not run (fewer than 3 people, a rating kind, …)."""
    try:
        result = alt_test_for_task(task, judge, epsilon)
    except EscalationProblem as problem:
        return {"judge": judge, "problem": str(problem)}
    if result.winning_rate is None:
        return {"judge": judge, "problem": f"no annotator shares 30 items with {judge}"}
    return {"judge": judge, "epsilon": epsilon, "winning_rate": result.winning_rate,
            "advantage_probability": result.advantage_probability, "passed": result.passed,
            "n_annotators": len(result.annotators)}


def create_batch(plan_id: int, name: str, overlap: int) -> Batch:
    """The human batch of the plan's escalated items (once per plan; EscalationProblem otherwise)."""
    with transaction.atomic():
        row = EscalationPlan.objects.select_for_update().select_related("task").get(pk=plan_id)
        if row.status != EscalationPlan.Status.DONE:
            raise EscalationProblem("the plan is not computed yet")
        if row.batch_id is not None:
            raise EscalationProblem(f"this plan's batch exists already: {row.batch.name!r}")
        batch = create_escalation_batch(row.task, row.result["escalated_item_ids"], name, overlap)
        row.batch = batch
        row.save(update_fields=["batch"])
    return batch
