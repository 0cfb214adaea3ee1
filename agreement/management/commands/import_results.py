"""``python manage.py import_results PATH``: import MTEB results (folder, .json, .zip or .tar.gz), all or nothing."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.results.results_import import import_path
from measures.results.mteb_files import ResultsImportError


class Command(BaseCommand):
    help = (
        "Import model results in MTEB's TaskResult format: a folder laid out as <org__model>/<revision>/<Task>.json, "
        "a .zip / .tar.gz of one, or a single TaskResult .json. Nothing is imported if any file is malformed; "
        "importing the same results again changes nothing."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", help="Folder, .json, .zip, .tar or .tar.gz")
        parser.add_argument("--model", help="Model name for a single .json (default: from its folders)")
        parser.add_argument("--revision", help="Revision for a single .json (default: its folder name)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = import_path(options["path"], model_name=options["model"], revision=options["revision"])
        except ResultsImportError as exc:
            raise CommandError(f"nothing imported: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(summary.message))
