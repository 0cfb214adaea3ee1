"""`python manage.py demo_sage`: the demo's SAGE study and its runs (agreement/sage/demo_study.py); scripts/run calls
it after `demo_models`, which registers the MiniLM whose run this queues for the worker."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from agreement.model_runs.models import EmbeddingModel
from agreement.model_runs.shipped import MINILM_NAME
from agreement.sage.demo_study import load


class Command(BaseCommand):
    help = "Put the demo SAGE study under SAGE_STUDIES_DIR, score the classical metrics, queue MiniLM's run."

    def handle(self, *args: Any, **options: Any) -> None:
        model = MINILM_NAME if EmbeddingModel.objects.filter(name=MINILM_NAME).exists() else None
        for run in load(model):
            scorers = ", ".join([*run.model_names, *run.metrics])
            self.stdout.write(f"SAGE demo run #{run.pk} ({scorers}): {run.status}")
