"""The demo shows MiniLM and the five classical metrics as model rows on the demo tasks."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from agreement.model_runs.models import ModelRun

pytestmark = pytest.mark.django_db


def test_demo_models_puts_minilm_and_the_classical_metrics_on_the_demo_tasks() -> None:
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=io.StringIO())
    out = io.StringIO()
    call_command("demo_models", "--wait", "--tasks", "STS (English),Sentiment (Danish)", stdout=out)
    runs = ModelRun.objects.select_related("task", "model")
    sts = {r.model.name: r for r in runs if r.task.name == "STS (English)"}
    assert sorted(sts) == ["all-MiniLM-L6-v2", "bm25", "jaccard", "levenshtein", "rouge", "tfidf"]
    assert all(r.status == "done" and r.scores["gold"]["main_metric"] == "cosine_spearman" for r in sts.values())
    sentiment = [r.model.name for r in runs if r.task.name == "Sentiment (Danish)"]
    assert sentiment == ["all-MiniLM-L6-v2"]  # classification needs vectors: no classical rows
    assert "STS (English)" in out.getvalue() and "all-MiniLM-L6-v2" in out.getvalue()
