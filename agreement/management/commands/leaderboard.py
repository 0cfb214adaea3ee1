"""``python manage.py leaderboard [--table 1|2|4|5|6|7|8|5.1]``: HUME's tables from the imported results and
this project's humans (Table 1 by default; the math is in measures/results/table1.py, its siblings and
paper_tables.py)."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.core.reports import report_in_process
from agreement.results import paper_tables as pt
from agreement.results.compare import Comparison, build, export_rows, leaderboard_rows, paper_figure, paper_table
from agreement.results.table_formats import table1_to_csv, table1_to_latex, to_json
from measures.results import paper_figures as pf
from measures.results.subset_scores import HUME_LANGUAGES
from measures.results.table1 import RANK_OVER
from tasks_app.models import Task

TABLES = {
    "1": "Table 1: humans, models and LLM annotators per task kind and language",
    "2": "Table 2: LLM annotators against humans and the best embedding model per category",
    "4": "Table 4: every model per clustering dataset, averaged across languages",
    "5": "Table 5: every model per classification dataset, averaged across languages",
    "6": "Table 6: every model per reranking dataset, averaged across languages",
    "7": "Table 7: every model per STS dataset, averaged across languages",
    "8": "Table 8: human performance with 95% confidence intervals",
    "5.1": "Section 5.1: Spearman between agreement and the best model's % of human",
}


class Command(BaseCommand):
    help = (
        "Print one of HUME's tables (default Table 1: models, humans and LLM annotators ranked on the unweighted "
        "mean main score over task-language subsets). JSON scores are on MTEB's 0-1 scale; CSV and LaTeX print "
        "them x100 like the paper."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--languages", default=None,
                            help="Comma-separated language codes (default: HUME's five; for tables 4-7 every "
                                 "language of the result files, as the paper's tables average them)")
        parser.add_argument("--format", choices=("json", "csv", "latex"), default="json")
        parser.add_argument("--table", choices=tuple(TABLES), default="1",
                            help="; ".join(f"{key}: {text}" for key, text in TABLES.items()))
        parser.add_argument("--figure", choices=pf.FIGURES,
                            help="Draw HUME Figure 1 or 12-16 instead of a table, into --out (.svg or .png)")
        parser.add_argument("--out", type=Path, help="File the figure is written to (.svg or .png)")
        parser.add_argument("--rank-over", choices=RANK_OVER, default="shared",
                            help="Table 1: rank over the subsets the compared rows share (default), or rank only "
                                 "rows with all subsets (HUME's rule when every row comes from the same benchmark)")
        parser.add_argument("--human", help="The human entry of tables 2, 8 and 5.1 (default: this project's "
                                            "humans when they have scores, else the imported reference)")

    def handle(self, *args: Any, **options: Any) -> None:
        given = options["languages"]
        languages = [code.strip() for code in (given or ",".join(HUME_LANGUAGES)).split(",") if code.strip()]
        if not languages:
            raise CommandError("--languages needs at least one language code, e.g. eng-Latn")
        comparison, table, fmt = self.comparison(), options["table"], options["format"]
        if options["figure"]:
            self._figure(comparison, options["figure"], languages, options["human"], options["out"])
            return
        if table == "1":
            self._table1(comparison, languages, fmt, options["rank_over"])
            return
        human = "" if table in pt.DATASET_TABLES else self._human(comparison, options["human"])
        data = paper_table(comparison, table, languages if given or table not in pt.DATASET_TABLES else None, human)
        if fmt == "csv":
            self.stdout.write(pt.rows_to_csv(table, data), ending="")
        elif fmt == "latex":
            self.stdout.write(pt.rows_to_latex(table, data, caption=TABLES[table]), ending="")
        else:
            self.stdout.write(to_json(data))

    def _table1(self, comparison: Comparison, languages: list[str], fmt: str, rank_over: str) -> None:
        rows = leaderboard_rows(comparison, languages, rank_over=rank_over)
        if fmt == "csv":
            self.stdout.write(table1_to_csv(rows), ending="")
        elif fmt == "latex":
            self.stdout.write(table1_to_latex(rows, caption="Humans, models and LLM annotators "
                                              f"({', '.join(languages)})", label="tab:leaderboard"), ending="")
        else:
            self.stdout.write(to_json(export_rows(rows)))

    def comparison(self) -> Comparison:
        """The comparison, after computing here any mapped task's missing report with the worker's code
        (as the `report` command does; pages and the API only queue it)."""
        comparison = build()
        if not comparison.pending:
            return comparison
        for task in Task.objects.filter(pk__in=[pending.task_id for pending in comparison.pending]):
            _, how = report_in_process(task)
            self.stderr.write(f"{task.name}: report {how}")
        return build()

    def _figure(self, comparison: Comparison, number: str, languages: list[str], human: str | None,
                out: Path | None) -> None:
        if out is None or out.suffix not in (".svg", ".png"):
            raise CommandError("--figure needs --out FILE.svg or FILE.png")
        data = paper_figure(comparison, number, self._human(comparison, human), languages)
        drawing = pf.render(data, out.suffix[1:])
        if isinstance(drawing, bytes):
            out.write_bytes(drawing)
        else:
            out.write_text(drawing, encoding="utf-8")
        self.stdout.write(f"{out}: {data['title']} — {data['summary']}")

    def _human(self, comparison: Comparison, human: str | None) -> str:
        human = human or comparison.default_human()
        if human is None or human not in comparison.names("human"):
            known = ", ".join(comparison.names("human")) or "none imported or computed"
            raise CommandError(f"--human {human!r} is not a human entry (known: {known})")
        return human
