"""python manage.py import_run FILE --collection NAME --name RANKING [--subset S]: a TREC run file, atomically."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.retrieval.models import Ranking
from agreement.retrieval.rankings import import_ranking
from hume.lib.import_reader import ImportFailed


class Command(BaseCommand):
    help = ("Import a TREC run file (qid Q0 docid rank score tag) as a ranking of a collection; a bad file imports "
            "nothing.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", help="the run file")
        parser.add_argument("--collection", required=True, help="the collection the ranking ranks")
        parser.add_argument("--name", required=True, help="ranking name, unique in the collection")
        parser.add_argument("--subset", help="the subset, when query ids repeat across subsets")
        parser.add_argument("--method", "--kind", default=Ranking.Method.IMPORTED, choices=Ranking.Method.values,
                            help="the method that produced the ranking (default: imported; --kind is its old spelling)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with path.open("rb") as stream:
                summary = import_ranking(stream, path.name, collection=opts["collection"], name=opts["name"],
                                     subset=opts["subset"], method=opts["method"])
        except ImportFailed as failed:
            raise CommandError(f"nothing was imported:\n{failed}") from None
        for line in summary.lines():
            self.stdout.write(line)
