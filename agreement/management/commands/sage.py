"""`python manage.py sage run --datasets DIR --metrics levenshtein,jaccard [--models a,b] [--human-task NAME]
--format json|csv|latex` and `python manage.py sage tasks --datasets DIR --output FILE.jsonl`.

Runs a SAGE study (agreement/sage/, docs/sage.md) and prints Table 1: JSON carries the per-dataset
subtables (the paper's Tables 2-6) too; CSV and LaTeX are Table 1 alone. `--seed` fixes every perturbation,
so the same seed prints the same table. `--metrics` names the classical metrics of agreement/sage/baselines.py;
`--models` names models of the model registry (agreement.model_runs), which this command uses when it is
installed and otherwise refuses with a clear message. Bad study files stop the run before anything is scored,
with the file, line and field.

Humans on SAGE: `sage tasks` writes the robustness and sensitivity pairs as STS items (import them with
`import_task FILE --kind sts ...`); once people have rated them, `sage run --human-task NAME` adds their row.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.datasets import SageDataError, load_study
from agreement.sage.humans import human_scorer, sts_items
from agreement.sage.named_scorers import metric_scorers, model_scorers, split_names
from agreement.sage.study import Scorer, run_study
from agreement.sage.table import FORMATS, render, subtables_csv
from annotation.models import Annotation, Annotator
from tasks_app.models import Task


def human_task_scorer(name: str) -> Scorer:
    """The human row from an STS task made by `sage tasks`: mean human rating per item, skips left out."""
    task = Task.objects.filter(name=name).first()
    if task is None or not task.kind_definition.sentence_pairs:
        raise CommandError(f"no STS task named {name!r} (make one from `sage tasks` and import_task --kind sts)")
    items = [{"id": ext, "sentence1": payload["sentence1"], "sentence2": payload["sentence2"]}
             for ext, payload in task.items.values_list("external_id", "payload")]
    ratings: dict[str, list[float]] = defaultdict(list)
    rows = Annotation.objects.counted().filter(item__task=task, skipped=False, annotator__agent=Annotator.Agent.HUMAN)
    for ext, value in rows.values_list("item__external_id", "value"):
        if isinstance(value, int | float) and not isinstance(value, bool):
            ratings[ext].append(float(value))
    means = {ext: sum(v) / len(v) for ext, v in ratings.items()}
    low = 0.0 if task.scale_min is None else task.scale_min
    high = 5.0 if task.scale_max is None else task.scale_max
    return human_scorer(items, means, (low, high))


def _study(folder: str) -> Any:
    try:
        return load_study(Path(folder))
    except SageDataError as error:
        raise CommandError(str(error)) from None


class Command(BaseCommand):
    help = "SAGE studies: `sage run --datasets DIR --metrics levenshtein,jaccard --format json|csv|latex`."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="score models and metrics on a study folder and print Table 1")
        run.add_argument("--datasets", required=True, help="the study folder (layout in docs/sage.md)")
        run.add_argument("--metrics", default="", help="classical metrics: " + ",".join(BASELINE_METRICS))
        run.add_argument("--models", default="", help="models of the model registry (agreement.model_runs)")
        run.add_argument("--no-cache", action="store_true",
                         help="write nothing to the embedding cache (what it holds is still read): a first pass "
                              "whose vectors are used once")
        run.add_argument("--format", choices=FORMATS, default="json")
        run.add_argument("--seed", type=int, default=0, help="seed of every perturbation (default 0)")
        run.add_argument("--subtables", action="store_true",
                         help="with --format csv: the per-dataset subtables (Tables 2-6), one number a row")
        run.add_argument("--human-task", help="an STS task made from `sage tasks`: adds the humans' row")
        run.add_argument("--output", help="write the table to this file instead of standard output")
        tasks = sub.add_parser("tasks", help="write the robustness and sensitivity pairs as STS items (JSONL)")
        tasks.add_argument("--datasets", required=True)
        tasks.add_argument("--seed", type=int, default=0, help="the seed `sage run` will use (default 0)")
        tasks.add_argument("--output", required=True, help="the JSONL file for import_task --kind sts")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "tasks":
            self.write_tasks(options)
            return
        scorers = [*model_scorers(split_names(options["models"])), *metric_scorers(split_names(options["metrics"]))]
        if options["human_task"]:
            scorers.append(human_task_scorer(options["human_task"]))
        if not scorers:
            raise CommandError("name at least one --models, --metrics or --human-task")
        study = _study(options["datasets"])
        if options["no_cache"]:
            from agreement.model_runs.embedding_store import writes_off

            with writes_off():
                table = run_study(study, scorers, seed=options["seed"])
        else:
            table = run_study(study, scorers, seed=options["seed"])
        if options["subtables"] and options["format"] != "csv":
            raise CommandError("--subtables goes with --format csv (JSON always carries the subtables)")
        text = subtables_csv(table) if options["subtables"] else render(table, options["format"])
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text, ending="")

    def write_tasks(self, options: dict[str, Any]) -> None:
        items = sts_items(_study(options["datasets"]), options["seed"])
        with Path(options["output"]).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        self.stdout.write(f"wrote {len(items)} STS pairs to {options['output']}; import them with "
                          f"`import_task {options['output']} --kind sts --name NAME --language LANG`")
