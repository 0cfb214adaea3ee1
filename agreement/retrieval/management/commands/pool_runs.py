"""python manage.py pool_runs COLLECTION --subset S --rankings A,B --depth K: judging units from rankings' top-K."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.retrieval.models import Ranking, Subset
from agreement.retrieval.pooling import build_pool


class Command(BaseCommand):
    help = ("Pool the top-K of chosen rankings per query of a subset into a graded-relevance task (one pair per item); "
            "pooling again adds only pairs not judged yet.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("collection")
        parser.add_argument("--subset", required=True)
        parser.add_argument("--rankings", "--runs", dest="rankings", required=True,
                            help="ranking names, comma-separated (--runs: the same, its name before the rename)")
        parser.add_argument("--depth", type=int, default=10, help="top-K of each ranking (default 10)")
        parser.add_argument("--step", type=float, default=0.1, help="score step of the task (default 0.1)")
        parser.add_argument("--task", help="name of the pool task (default: '<collection> <subset> pool')")

    def handle(self, *args: Any, **opts: Any) -> None:
        subset = Subset.objects.filter(collection__name=opts["collection"], name=opts["subset"]).first()
        if subset is None:
            raise CommandError(f"no subset {opts['subset']!r} in collection {opts['collection']!r}")
        names = [n.strip() for n in opts["rankings"].split(",") if n.strip()]
        rankings = list(Ranking.objects.filter(collection=subset.collection, name__in=names))
        missing = sorted(set(names) - {r.name for r in rankings})
        if missing:
            raise CommandError(f"collection {opts['collection']!r} has no ranking {', '.join(map(repr, missing))}")
        try:
            summary = build_pool(subset, rankings, opts["depth"], task_name=opts["task"], step=opts["step"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for line in summary.lines():
            self.stdout.write(line)
