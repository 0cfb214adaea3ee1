"""python manage.py import_collection DIR --name NAME --language LANG [--subset S]: one subset, atomically."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.retrieval.collection_import import import_collection
from hume.lib.import_reader import ImportFailed


class Command(BaseCommand):
    help = ("Import one subset of a retrieval collection in the BEIR / MTEB layout (corpus.jsonl, queries.jsonl, "
            "qrels/<split>.tsv). Run once per subset (language); a bad file imports nothing.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("directory", help="folder with corpus.jsonl, queries.jsonl and qrels/")
        parser.add_argument("--name", required=True, help="collection name, e.g. SciFact")
        parser.add_argument("--language", required=True, help="MTEB-style code of this subset, e.g. eng-Latn")
        parser.add_argument("--subset", help="MTEB hf_subset name (default: the language code)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["directory"])
        if not path.is_dir():
            raise CommandError(f"{path}: no such folder")
        try:
            summary = import_collection(path, name=opts["name"], language=opts["language"], subset=opts["subset"])
        except ImportFailed as failed:
            raise CommandError(f"nothing was imported:\n{failed}") from None
        for line in summary.lines():
            self.stdout.write(line)
