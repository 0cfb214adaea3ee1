"""The demo shows every study (issue 28 item 3): model rows on every demo task, and a SAGE study with a
finished run (the classical metrics, computed by `demo_sage` in its own process) and MiniLM's run queued."""
from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from agreement.model_runs.models import ModelRun
from agreement.sage.models import SageRun
from tasks_app.models import Task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def purge_queued_runs() -> Iterator[None]:
    yield
    from hume.lib.celery_app import app

    app.control.purge()  # the demo queues runs for a worker that these tests do not start


def test_every_demo_task_gets_model_rows_and_the_sage_demo_a_finished_run(settings, tmp_path, dave) -> None:
    settings.SAGE_STUDIES_DIR = tmp_path
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=io.StringIO())
    call_command("demo_models", stdout=io.StringIO())  # queued for the worker, as scripts/run does
    tasks = list(Task.objects.order_by("name"))
    assert len(tasks) == 14  # 13 small ones, and the demo campaign's 600 STS pairs (tests/test_demo.py)
    models_by_task = {t.name: sorted(ModelRun.objects.filter(task=t).values_list("model__name", flat=True))
                      for t in tasks}
    assert all(models_by_task.values()), [name for name, runs in models_by_task.items() if not runs]
    assert models_by_task["Emotion (English)"] == ["all-MiniLM-L6-v2"]  # classification: vectors only
    assert models_by_task["STS (English)"] == ["all-MiniLM-L6-v2", "bm25", "jaccard", "levenshtein", "rouge", "tfidf"]

    out = io.StringIO()
    call_command("demo_sage", stdout=out)
    finished, queued = SageRun.objects.order_by("pk")
    assert (finished.study, finished.status, finished.seed) == ("demo", "done", 0)
    names = [row["name"] for row in finished.table["rows"]]
    assert names == ["BM25", "Jaccard Similarity", "Levenshtein Ratio", "ROUGE-L", "TF-IDF Cosine"]
    assert finished.table["missing_categories"] == []  # the demo study covers all five categories
    assert (queued.model_names, queued.status) == (["all-MiniLM-L6-v2"], "queued")  # for the worker
    assert (tmp_path / "demo" / "retrieval" / "mini" / "corpus.jsonl").is_file()
    assert f"SAGE demo run #{finished.pk} (levenshtein, jaccard, rouge, tfidf, bm25): done" in out.getvalue()
    call_command("demo_sage", stdout=io.StringIO())  # idempotent
    assert SageRun.objects.count() == 2

    client = Client()
    client.force_login(dave)
    assert '<option value="demo"' in client.get("/sage/").content.decode()
    html = client.get(f"/sage/{finished.pk}/").content.decode()
    assert 'id="sage-table1"' in html and "<th scope=\"row\">BM25</th>" in html
