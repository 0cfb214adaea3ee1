"""What the model-run commands share: the registered models a command line names (``--models a,b``)."""
from __future__ import annotations

from django.core.management.base import CommandError

from agreement.model_runs.models import EmbeddingModel


def find_models(names: str) -> list[EmbeddingModel]:
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    found = {m.name: m for m in EmbeddingModel.objects.filter(name__in=wanted)}
    missing = [n for n in wanted if n not in found]
    if missing or not wanted:
        raise CommandError(f"no registered model named {', '.join(missing) or '(none given)'} (see add_model)")
    return [found[n] for n in wanted]
