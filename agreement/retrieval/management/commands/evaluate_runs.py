"""python manage.py evaluate_runs COLLECTION [--qrels FILE | --judgments TASK] --format json|csv|latex."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.retrieval.evaluation_exports import as_csv, as_json, as_latex
from agreement.retrieval.evaluation_inputs import evaluate_collection, qrels_file
from agreement.retrieval.models import Collection
from hume.lib.import_reader import ImportFailed


def cut_offs(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",")})
    except ValueError:
        raise CommandError(f"--k: {text!r} is not a comma-separated list of whole numbers") from None
    if not ks or ks[0] < 1 or ks[-1] > 1000:
        raise CommandError("--k: cut-offs must lie in 1..1000")
    return ks


def thresholds(pairs: list[str]) -> dict[str, float]:
    out = {}
    for pair in pairs:
        name, _, value = pair.rpartition("=")
        try:
            out[name or "*"] = float(value)
        except ValueError:
            raise CommandError(f"--threshold: {pair!r} is not NAME=NUMBER (or NUMBER for every judge)") from None
    return out


class Command(BaseCommand):
    help = ("Score every ranking of a collection at nDCG@k, Recall@k and MAP against the original qrels, each LLM "
            "judge, the mean of the judges and the humans (or a graded qrels file, or one pool task's judges).")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("collection")
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--qrels", help="a (graded) qrels file: BEIR TSV or TREC qid 0 docid relevance")
        source.add_argument("--judgments", metavar="TASK", help="only the judges of this pool task")
        parser.add_argument("--split", default="test", help="qrels split of the collection (default test)")
        parser.add_argument("--k", default="1,3,5,10,20,100", help="cut-offs, comma-separated")
        parser.add_argument("--threshold", action="append", default=[], metavar="[NAME=]VALUE",
                            help="relevance threshold for Recall and MAP, per judge name or reference "
                                 "(e.g. gpt=7 judges:mean=6.5); a bare number sets every judge's (default 7)")
        parser.add_argument("--format", default="json", choices=["json", "csv", "latex"])

    def handle(self, *args: Any, **opts: Any) -> None:
        collection = Collection.objects.filter(name=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection named {opts['collection']!r}")
        ks, external = cut_offs(opts["k"]), None
        if opts["qrels"]:
            path = Path(opts["qrels"])
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            try:
                with path.open("rb") as stream:
                    external = qrels_file(collection, stream, path.name)
            except ImportFailed as failed:
                raise CommandError(f"the qrels file was refused:\n{failed}") from None
        rows = evaluate_collection(collection, split=opts["split"], thresholds=thresholds(opts["threshold"]),
                                   task=opts["judgments"], external=external, ks=ks)
        if not rows:
            raise CommandError("nothing to score: the collection needs rankings and judgments (qrels or judged pools)")
        data = [row.as_dict(ks) for row in rows]
        if opts["format"] == "json":
            self.stdout.write(as_json(data))
        elif opts["format"] == "csv":
            self.stdout.write(as_csv(data), ending="")
        else:
            self.stdout.write(as_latex(data, [f"ndcg@{k}" for k in ks if k in (10, 100)] + ["map"]), ending="")
