#!/usr/bin/env python
"""Page weight of the annotator's page: HTML + JS + CSS (vendored htmx excluded), per task kind.

Annotators load this page hundreds of times a day, often on weak connections; the budget is 60 KB.
Items are HUME-sized (30 texts per clustering set, 7 reranking candidates of passage length), rendered by
the real views on a throw-away test database (DATABASE_URL's server, database test_<name>).

    python bench/bench_page_weight.py            # prints bytes per resource and the total per kind
"""
from __future__ import annotations

import gzip
import os
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.contrib.staticfiles import finders  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

BUDGET = 60 * 1024
EXCLUDED = ("vendor/htmx.min.js",)
WORDS = ("the model measures human performance on text embedding tasks with careful annotators who read every "
         "sentence and judge relevance similarity clusters summaries quality coherence across many languages").split()


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def hume_sized_records(rng: random.Random) -> dict[str, list[dict]]:
    """One record per kind, at the sizes of the HUME study's items."""
    return {
        "classification": [{"id": "1", "text": text(rng, 60), "label": "positive"}],
        "clustering": [{"id": "1", "sentences": [text(rng, 14) for _ in range(30)]}],
        "reranking": [{"id": "1", "query": text(rng, 10), "instruction": text(rng, 12),
                       "candidates": [{"id": f"c{i}", "text": text(rng, 70)} for i in range(7)]}],
        "graded_relevance": [{"id": "1", "query": text(rng, 10),
                              "documents": [{"id": f"d{i}", "text": text(rng, 70)} for i in range(10)]}],
        "sts": [{"id": "1", "sentence1": text(rng, 18), "sentence2": text(rng, 18)}],
        "pairwise": [{"id": "1", "context": text(rng, 200), "a": text(rng, 60), "b": text(rng, 60)}],
        "likert": [{"id": "1", "context": text(rng, 200), "text": text(rng, 60)}],
    }


def static_resources(html: str) -> list[str]:
    found = re.findall(r'<script[^>]+src="([^"]+)"', html) + re.findall(r'<link[^>]+href="([^"]+\.css)"', html)
    return [url.removeprefix(settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL)
            for url in found]


def measure(client: Client, batch_id: int) -> list[tuple[str, bytes]]:
    response = client.get(f"/annotate/b/{batch_id}/")
    assert response.status_code == 200, response.status_code
    html = response.content
    parts = [("HTML", html)]
    for path in static_resources(html.decode()):
        if path in EXCLUDED:
            continue
        parts.append((path, Path(finders.find(path)).read_bytes()))
    return parts


def build_batches() -> tuple[User, dict[str, int]]:
    from annotation.models import Annotator
    from tests.loop_data import add_items, make_batch, make_task

    user = User.objects.create_user("bench-annotator", password="x")
    annotator = Annotator.objects.create(user=user)
    rng = random.Random(7)
    batches = {}
    for kind, records in hume_sized_records(rng).items():
        task = make_task(kind, name=f"bench {kind}")
        batches[kind] = make_batch(task, [annotator], add_items(task, records)).pk
    return user, batches


def report(kind: str, parts: list[tuple[str, bytes]]) -> int:
    total = sum(len(body) for _, body in parts)
    zipped = sum(len(gzip.compress(body)) for _, body in parts)
    print(f"\n{kind}")
    for name, body in parts:
        print(f"  {name:<28} {len(body):>7} B   gzip {len(gzip.compress(body)):>6} B")
    verdict = "within" if total <= BUDGET else "OVER"
    print(f"  {'total':<28} {total:>7} B   gzip {zipped:>6} B   ({total / 1024:.1f} KB, {verdict} the 60 KB budget)")
    return total


def main() -> int:
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user, batches = build_batches()
        client = Client()
        client.force_login(user)
        totals = {kind: report(kind, measure(client, batch_id)) for kind, batch_id in batches.items()}
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    heaviest = max(totals, key=totals.get)
    print(f"\nheaviest page: {heaviest}, {totals[heaviest]} B ({totals[heaviest] / 1024:.1f} KB) "
          f"of a {BUDGET // 1024} KB budget (htmx excluded)")
    return 0 if totals[heaviest] <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
