"""Stored reports say each annotator's `agent` (human, llm), no longer `kind` (report format 8, docs/reports.md):
the pages and exports read the new key, so the stored documents are rewritten in place, the same values under the
new key; a report computed before still differs in its digests and is recomputed when asked for."""
from __future__ import annotations

from typing import Any

from django.db import migrations

AGENTS = {"human", "llm", "combined"}


def renamed(value: Any, old: str, new: str) -> Any:
    """`value` with every annotator row's (a dict with a name and an agent's value under `old`) key renamed."""
    if isinstance(value, list):
        return [renamed(entry, old, new) for entry in value]
    if not isinstance(value, dict):
        return value
    row = {key: renamed(entry, old, new) for key, entry in value.items()}
    if "name" in row and row.get(old) in AGENTS and new not in row:
        row = {(new if key == old else key): entry for key, entry in row.items()}
    return row


def rewrite(apps: Any, old: str, new: str) -> None:
    Report = apps.get_model("agreement", "Report")
    for report in Report.objects.exclude(result__isnull=True).only("pk", "result").iterator(chunk_size=200):
        result = renamed(report.result, old, new)
        if result != report.result:
            Report.objects.filter(pk=report.pk).update(result=result)


class Migration(migrations.Migration):
    dependencies = [("agreement", "0008_campaign_review"), ("annotation", "0016_annotator_agent")]

    operations = [migrations.RunPython(lambda apps, _: rewrite(apps, "kind", "agent"),
                                       lambda apps, _: rewrite(apps, "agent", "kind"))]
