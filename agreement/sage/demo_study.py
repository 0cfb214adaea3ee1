"""The demo's SAGE study (issue 28 item 3): demo/sage-study copied under SAGE_STUDIES_DIR as "demo", a run of
every classical metric computed at once, in this process (a few seconds of CPU on its seven small files), and,
when the demo's MiniLM is registered, a run of it queued for the workers (about half a minute of CPU).

Idempotent: a study folder already there is kept, and a run already stored for the same scorers is not asked
again (a failed one is).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from django.conf import settings

from agreement.sage import study_jobs
from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.models import SageRun
from hume.jobs import enqueue_on_commit

DEMO_STUDY = "demo"
DEMO_SOURCE = Path(settings.BASE_DIR) / "demo" / "sage-study"


def install_study() -> Path:
    target = study_jobs.studies_dir() / DEMO_STUDY
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(DEMO_SOURCE, target)
    return target


def _stored(metrics: list[str], models: list[str]) -> SageRun | None:
    return (SageRun.objects.filter(study=DEMO_STUDY, metrics=metrics, model_names=models)
            .exclude(status=SageRun.Status.FAILED).first())


def load(model_name: str | None) -> list[SageRun]:
    """The demo's runs: the classical metrics finished here, the model (if registered) queued for a worker."""
    folder = install_study()
    metrics = list(BASELINE_METRICS)
    runs = []
    run = _stored(metrics, [])
    if run is None:
        run = SageRun.objects.create(study=DEMO_STUDY, folder=str(folder), metrics=metrics, seed=0)
        study_jobs.execute(run.pk)
        run.refresh_from_db()
    runs.append(run)
    if model_name:
        run = _stored([], [model_name])
        if run is None:
            run = SageRun.objects.create(study=DEMO_STUDY, folder=str(folder), model_names=[model_name], seed=0)
            enqueue_on_commit("sage.run_study", run.pk)
        runs.append(run)
    return runs
