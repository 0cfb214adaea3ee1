"""`python manage.py demo_campaign`: the demo's campaign on "STS campaign (English)"
(agreement/campaigns/campaign_demo.py); scripts/run calls it after `load_demo`, which loads the task and its
judge's answers."""
from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.campaigns.campaign_demo import load
from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import status, status_text


class Command(BaseCommand):
    help = "Start the demo campaign with its people's earlier answers, and the judge's PPI estimate and escalation."

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        try:
            campaign = load()
        except CampaignError as problem:
            raise CommandError(str(problem)) from None
        self.stdout.write(status_text(status(campaign)))
        self.stdout.write(f"(demo campaign ready in {time.perf_counter() - started:.1f} s)")
