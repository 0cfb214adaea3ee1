"""`manage.py campaign start|status|stop`: a thin wrapper of agreement/campaigns/ (docs/campaigns.md, "The CLI")."""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status, status_text
from agreement.campaigns.models import Campaign
from agreement.campaigns.reviewing import stop_campaign
from agreement.campaigns.starting import start_campaign
from agreement.campaigns.study_links import DEFAULT_MINUTES, DEFAULT_QUOTA, read_wanted


class Command(BaseCommand):
    help = "Start a campaign, show where it stands, or stop it (docs/campaigns.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        start = actions.add_parser("start", help="start a campaign and hand out its first batch")
        start.add_argument("name")
        start.add_argument("--task", required=True)
        start.add_argument("--judge", required=True, help="an LLM annotator: its answers on every item of the task, "
                           "or an endpoint configured (the campaign runs it first)")
        start.add_argument("--target-half-width", type=float, required=True)
        start.add_argument("--level", type=float, default=0.95)
        start.add_argument("--estimand", default=None, help="default: the kind's first estimand")
        start.add_argument("--budget-labels", type=int, default=None)
        start.add_argument("--price-per-label", type=Decimal, default=None)
        start.add_argument("--annotators", default=None, help="a,b,c (default: every person with the language)")
        start.add_argument("--study-link", nargs="?", const="new", default=None, metavar="ID",
                           help="the people: a crowd study link that follows the campaign's batches, new (no value) "
                                "or an existing link of the task (its id)")
        start.add_argument("--study-quota", type=int, default=None, help=f"a new link's items per participant "
                           f"(default {DEFAULT_QUOTA})")
        start.add_argument("--study-minutes", type=int, default=None, help=f"a new link's time limit "
                           f"(default {DEFAULT_MINUTES})")
        start.add_argument("--completion-code", default=None, help="a new link's code (default: random)")
        start.add_argument("--prolific", action="store_true", help="a new link for Prolific")
        start.add_argument("--overlap", type=int, default=1)
        start.add_argument("--sampling", choices=[s.value for s in Campaign.Sampling], default="uniform")
        start.add_argument("--seed", type=int, default=0)
        start.add_argument("--format", choices=["json", "text"], default="text")
        for action in ("status", "stop"):
            sub = actions.add_parser(action)
            sub.add_argument("name")
            sub.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "start":
            names = options["annotators"]
            try:
                link = read_wanted(options["study_link"], quota=options["study_quota"],
                                   minutes=options["study_minutes"], completion_code=options["completion_code"],
                                   platform="prolific" if options["prolific"] else None)
                campaign = start_campaign(
                    options["name"], options["task"], options["judge"], options["target_half_width"],
                    estimand=options["estimand"], level=options["level"], budget_labels=options["budget_labels"],
                    price_per_label=options["price_per_label"],
                    annotators=None if names is None else [n.strip() for n in names.split(",") if n.strip()],
                    overlap=options["overlap"], sampling=options["sampling"], seed=options["seed"],
                    study_link=link)
            except CampaignError as problem:
                raise CommandError(str(problem)) from None
        else:
            campaign = Campaign.objects.filter(name=options["name"]).first()
            if campaign is None:
                raise CommandError(f"no campaign named {options['name']!r}")
            if options["action"] == "stop":
                campaign = stop_campaign(campaign)
        data = status(campaign)
        self.stdout.write(json.dumps(data, indent=2) if options["format"] == "json" else status_text(data))
