"""Asking for a SAGE run and running it in a worker: the page never computes inside a request.

`execute` claims the row through the job layer (hume/jobs/lease.py: one conditional UPDATE), so a message
delivered twice runs the study once; its lease is renewed while the study runs, so a worker killed mid-run
leaves a lease that lapses and the layer's beat sends the run to another worker, which runs it again from its
seed (the same table). Every write goes through the lease: a worker that lost it stores nothing. The scorers
are the `sage` command's own (`named_scorers.py`), so the page's table is the CLI's table for the same study, names
and seed.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from agreement.model_runs.device import worker_device
from agreement.sage.datasets import SageDataError, load_study
from agreement.sage.models import SageRun
from agreement.sage.named_scorers import check_models_may_run, metric_scorers, model_scorers
from agreement.sage.study import run_study
from hume import jobs
from hume.jobs.lease import claim


def studies_dir() -> Path:
    return Path(getattr(settings, "SAGE_STUDIES_DIR", settings.DATA_DIR / "sage"))


def available_studies() -> list[str]:
    root = studies_dir()
    if not root.is_dir():
        return []
    # a name starting with "." is an upload being checked (study_upload.py), not a study yet
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


MAX_SEED = 2**31 - 1  # SageRun.seed is an IntegerField: PostgreSQL's integer


def parse_seed(text: str | None) -> int:
    """The seed a form gave (blank: 0), or ValueError naming the field; the value is echoed cut short."""
    given = (text or "").strip() or "0"
    if not given.isascii() or not given.isdigit() or len(given) > 10 or int(given) > MAX_SEED:
        shown = given if len(given) <= 20 else given[:20] + "…"
        raise ValueError(f"seed: must be a whole number from 0 to {MAX_SEED}, got {shown!r}")
    return int(given)


def ask(study: str, metrics: list[str], models: list[str], seed: int, user: object) -> SageRun:
    """Check the names and the seed (a clear error, nothing stored), store the run and queue it after commit."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed: must be a whole number from 0 to {MAX_SEED}, got {seed}")
    if study not in available_studies():
        raise ValueError(f"no study folder named {study!r} in {studies_dir().name}/")
    if not metrics and not models:
        raise ValueError("choose at least one metric or model")
    try:
        metric_scorers(metrics), model_scorers(models)
        check_models_may_run(models, user)
    except CommandError as error:
        raise ValueError(str(error)) from None
    run = SageRun.objects.create(study=study, folder=str(studies_dir() / study), metrics=metrics, model_names=models,
                                 seed=seed, created_by=user)
    jobs.enqueue_on_commit("sage.run_study", run.pk)
    return run


def execute(run_id: int, claimed_by: str = "") -> str:
    lease = claim(SageRun.objects.filter(pk=run_id), claimed_by=claimed_by, max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "taken"
    run = SageRun.objects.get(pk=run_id)
    with lease.kept():
        try:
            device = worker_device() if run.model_names else "cpu"  # MODEL_DEVICE naming a missing GPU: failed
            lease.write(device=device)
            scorers = [*model_scorers(run.model_names), *metric_scorers(run.metrics)]
            table = run_study(load_study(Path(run.folder)), scorers, seed=run.seed)
        except (CommandError, SageDataError, ValueError, OSError) as error:
            lease.fail(str(error))
            return "failed"
        except Exception as error:  # a bug: stored on the row for the page, then raised for the worker's log
            lease.fail(f"{type(error).__name__}: {error}")
            raise
        return "done" if lease.finish(table=table) else "discarded: the claim was taken over"
