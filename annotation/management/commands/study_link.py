"""`python manage.py study_link BATCH --quota N --minutes M --completion-code CODE [--prolific]`.

Makes a public study link on a batch (docs/crowd.md) and prints its URL on the last line of stdout (with
Prolific's URL parameters when --prolific), so scripts can capture it. BATCH is a batch id. The link's address
starts with --base-url (default: the SITE_URL setting, else http://localhost:8000).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.crowd import studies
from annotation.crowd.models import StudyLink
from annotation.models import Batch

PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


class Command(BaseCommand):
    help = "Make a crowd study link on a batch; prints the link."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")
        parser.add_argument("--quota", type=int, required=True, help="work items per participant")
        parser.add_argument("--minutes", type=int, required=True, help="time limit from arrival")
        parser.add_argument("--completion-code", required=True)
        parser.add_argument("--prolific", action="store_true", help="participants come from Prolific")
        parser.add_argument("--consent", type=Path, help="a Markdown file shown (and agreed to) first")
        parser.add_argument("--gold-rate", type=float, default=0.0, help="hidden gold checks per work item")
        parser.add_argument("--min-seconds", type=int, default=0, help="flag answers faster than this")
        parser.add_argument("--straightline-run", type=int, default=0, help="flag this many equal answers in a row")
        parser.add_argument("--practice-failures-allowed", type=int, default=1)
        parser.add_argument("--min-answers", type=int, default=0,
                            help="answered items that earn the code when the batch runs out first (0: the quota)")
        parser.add_argument("--base-url", default=None, help="the app's public address")

    def handle(self, *args: Any, **options: Any) -> None:
        batch = Batch.objects.select_related("task").filter(pk=int(options["batch"])).first() \
            if options["batch"].isdigit() else None
        if batch is None:
            raise CommandError(f"BATCH: no batch with id {options['batch']!r}.")
        consent = ""
        if options["consent"] is not None:
            try:
                consent = options["consent"].read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"--consent: cannot read {options['consent']}: {exc}") from None
        wanted = studies.LinkSettings(
            quota=options["quota"], minutes=options["minutes"], completion_code=options["completion_code"],
            platform=StudyLink.Platform.PROLIFIC if options["prolific"] else StudyLink.Platform.GENERIC,
            consent=consent, gold_rate=options["gold_rate"], min_seconds=options["min_seconds"],
            straightline_run=options["straightline_run"],
            practice_failures_allowed=options["practice_failures_allowed"], min_answers=options["min_answers"])
        problems = studies.link_problems(batch, wanted)
        if problems:
            raise CommandError("\n".join(f"--{name.replace('_', '-')}: {message}" for name, message in problems))
        link = studies.create_study_link(batch, wanted)
        base = (options["base_url"] or getattr(settings, "SITE_URL", "") or "http://localhost:8000").rstrip("/")
        query = PROLIFIC_QUERY if options["prolific"] else "?participant=PARTICIPANT_ID"
        self.stderr.write(f"study link {link.pk} on batch {batch.pk} ({batch.name}): quota {link.quota}, "
                          f"{link.minutes} min, completion code {link.completion_code}")
        self.stdout.write(f"{base}/study/{link.token}/{query}")
