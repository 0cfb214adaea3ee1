"""Import a generated BEIR corpus of N documents and print seconds and the process's peak RSS.

Why: a collection import must stream (memory must not grow with the corpus). Run it for two sizes: each
size runs in its own child process, so each peak RSS is that import's alone; the two peaks should be about
equal while the corpus grows (texts are short, 12 words, to keep a million documents quick). The bench
collection is deleted afterwards.

Run: DATABASE_URL=... .venv/bin/python bench/bench_retrieval_import.py 100000 1000000
"""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")

WORDS = ("vaccine protein cell gene trial patients dose risk effect study model data results brain memory sleep "
         "vitamin cancer heart blood immune response level increase reduce").split()


def generate(folder: Path, n_docs: int, n_queries: int = 1000) -> None:
    rng = random.Random(0)
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as f:
        for i in range(n_docs):
            f.write(json.dumps({"_id": f"d{i}", "title": f"Doc {i}",
                                "text": " ".join(rng.choices(WORDS, k=12))}) + "\n")
    with (folder / "queries.jsonl").open("w") as f:
        for q in range(n_queries):
            f.write(json.dumps({"_id": f"q{q}", "text": " ".join(rng.choice(WORDS) for _ in range(6))}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in range(n_queries):
            f.write(f"q{q}\td{rng.randrange(n_docs)}\t1\n")


def child(n_docs: int) -> None:
    import django

    django.setup()
    from django.conf import settings

    from agreement.retrieval.collection_import import import_collection

    settings.DEBUG = False  # DEBUG's query log keeps the last 9,000 statements (20 MB of id lists at 1M documents)

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), n_docs)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        import_collection(Path(tmp), name=f"bench-{n_docs}", language="eng-Latn", subset="default")
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    drop(f"bench-{n_docs}")
    print(f"{n_docs:>9,} documents: {seconds:6.1f} s ({n_docs / seconds:,.0f} docs/s), "
          f"peak RSS {peak / 1024:.0f} MB (before the import {base / 1024:.0f} MB)")


def drop(name: str) -> None:
    """Delete the bench collection in a few statements (the ORM's cascade would load a million documents)."""
    from django.db import connection, transaction

    from agreement.retrieval.models import Collection, Document, Qrel, Query, Subset

    with transaction.atomic(), connection.cursor() as cursor:
        subsets = list(Subset.objects.filter(collection__name=name).values_list("pk", flat=True))
        for model in (Qrel, Query, Document):
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE subset_id = ANY(%s)", [subsets])
        Collection.objects.filter(name=name).delete()


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        for size in sys.argv[1:] or ["100000", "1000000"]:
            subprocess.run([sys.executable, __file__, "--child", size], check=True)
