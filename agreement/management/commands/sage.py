"""`python manage.py sage run --datasets DIR --metrics levenshtein,jaccard [--models a,b] --format json|csv|latex`.

Runs a SAGE study (agreement/sage/, docs/sage.md) and prints Table 1: JSON carries the per-dataset
subtables (the paper's Tables 2-6) too; CSV and LaTeX are Table 1 alone. `--seed` fixes every perturbation,
so the same seed prints the same table. `--metrics` names the classical metrics of agreement/sage/baselines.py;
`--models` names models of the model registry (agreement.model_runs), which this command uses when it is
installed and otherwise refuses with a clear message. Bad study files stop the run before anything is scored,
with the file, line and field.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.sage.baselines import SCORERS
from agreement.sage.datasets import SageDataError, load_study
from agreement.sage.study import Scorer, run_study
from agreement.sage.table import FORMATS, render


def _names(value: str | None) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]


def metric_scorers(names: list[str]) -> list[Scorer]:
    unknown = [n for n in names if n not in SCORERS]
    if unknown:
        raise CommandError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(SCORERS)}")
    return [SCORERS[n] for n in names]


def model_scorers(names: list[str]) -> list[Scorer]:
    if not names:
        return []
    if importlib.util.find_spec("agreement.model_runs") is None:
        raise CommandError("--models needs the model registry (agreement.model_runs), which is not installed "
                           "here; use --metrics " + ",".join(SCORERS) + " for the classical metrics")
    raise CommandError("the model registry is installed but not yet wired to SAGE: see agreement/sage/study.py "
                       "(Scorer) for the interface it must provide")


class Command(BaseCommand):
    help = "SAGE studies: `sage run --datasets DIR --metrics levenshtein,jaccard --format json|csv|latex`."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="score models and metrics on a study folder and print Table 1")
        run.add_argument("--datasets", required=True, help="the study folder (layout in docs/sage.md)")
        run.add_argument("--metrics", default="", help="classical metrics: " + ",".join(SCORERS))
        run.add_argument("--models", default="", help="models of the model registry (agreement.model_runs)")
        run.add_argument("--format", choices=FORMATS, default="json")
        run.add_argument("--seed", type=int, default=0, help="seed of every perturbation (default 0)")
        run.add_argument("--output", help="write the table to this file instead of standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        scorers = [*model_scorers(_names(options["models"])), *metric_scorers(_names(options["metrics"]))]
        if not scorers:
            raise CommandError("name at least one --models or --metrics")
        try:
            study = load_study(Path(options["datasets"]))
        except SageDataError as error:
            raise CommandError(str(error)) from None
        text = render(run_study(study, scorers, seed=options["seed"]), options["format"])
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text, ending="")
