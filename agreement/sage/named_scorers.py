"""The scorers a SAGE study can run, by the names a researcher gives: classical metrics and registered models.

Shared by the `sage` command and the SAGE page's job (`study_jobs.py`), so the page's table is the CLI's table for
the same study, names and seed. Unknown names raise `CommandError` with the names that are known.
"""
from __future__ import annotations

import functools
import importlib.util

from django.core.management.base import CommandError

from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.study import Scorer


def split_names(value: str | None) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``: a comma-separated option or form field."""
    return [n.strip() for n in (value or "").split(",") if n.strip()]


def metric_scorers(names: list[str]) -> list[Scorer]:
    unknown = [n for n in names if n not in BASELINE_METRICS]
    if unknown:
        raise CommandError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(BASELINE_METRICS)}")
    return [BASELINE_METRICS[n] for n in names]


def model_scorers(names: list[str]) -> list[Scorer]:
    """Registered models (agreement.model_runs) as scorers: its `similarity` for pairs, `embed` for encoders."""
    if not names:
        return []
    if importlib.util.find_spec("agreement.model_runs") is None:
        raise CommandError("--models needs the model registry (agreement.model_runs), which is not installed "
                           "here; use --metrics " + ",".join(BASELINE_METRICS) + " for the classical metrics")
    from agreement.model_runs import embedding as runs
    from agreement.model_runs.models import EmbeddingModel

    found = {m.name: m for m in EmbeddingModel.objects.filter(name__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        raise CommandError(f"no registered model named {', '.join(missing)} (register it with add_model)")
    return [Scorer(m.name, functools.partial(runs.similarity, m),
                   embed=functools.partial(runs.embed, m) if m.is_encoder else None,
                   group="embedding" if m.is_encoder else "classical")
            for m in (found[n] for n in names)]


def check_models_may_run(names: list[str], user: object) -> None:
    """The models page's and the API's check (`check_may_run`): a researcher scores SAGE only with models whose
    "researchers may run" switch is on; CommandError naming those refused."""
    if not names:
        return
    from agreement.model_runs.models import EmbeddingModel, NotAllowedToRun, check_may_run

    try:
        check_may_run(user, EmbeddingModel.objects.filter(name__in=names))
    except NotAllowedToRun as error:
        raise CommandError(str(error)) from None
