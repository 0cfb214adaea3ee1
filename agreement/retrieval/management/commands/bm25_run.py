"""python manage.py bm25_run COLLECTION --name RANKING [--k 100]: a BM25 ranking (bm25s) over every subset."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.retrieval.models import Collection
from agreement.retrieval.system_rankings import bm25_ranking


class Command(BaseCommand):
    help = "Rank every subset of a collection with BM25 (bm25s) and store the top-K as a ranking."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("collection")
        parser.add_argument("--name", default="bm25", help="ranking name (default bm25)")
        parser.add_argument("--k", type=int, default=100, help="documents per query (default 100)")

    def handle(self, *args: Any, **opts: Any) -> None:
        collection = Collection.objects.filter(name=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection named {opts['collection']!r}")
        try:
            ranking = bm25_ranking(collection, opts["name"], k=opts["k"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"ranking {ranking.name} on collection {collection.name}: {ranking.entries.count()} ranked "
                          f"documents, depth {ranking.depth}")
