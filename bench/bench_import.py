"""Time a dataset import of 100,000 classification items on the configured database (DATABASE_URL).

Why: the issue asks that a 100,000-item file imports "in well under a minute" while streaming (memory must
not grow with the file). This generates a JSONL file, imports it through `manage.py import_task` (the code the
upload page and API share), imports it again (the idempotent path: 0 added, N unchanged), and prints seconds,
items/s and the process's peak RSS. The bench task is deleted afterwards unless --keep.

Run: DATABASE_URL=... .venv/bin/python bench/bench_import.py [--items 100000] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from tasks_app.models import Item, Task  # noqa: E402

LABELS = ["anger", "fear", "joy", "love", "sadness", "surprise"]
WORDS = ("the a film service was really not very good bad slow fast kind rude lovely awful great time place "
         "staff food train late early happy sad angry calm").split()
NAME = "bench: 100k classification import"


def generate(path: Path, n_items: int, seed: int = 0) -> int:
    """Write n JSONL items (about 120 characters of text each) line by line; returns the file size."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n_items):
            text = " ".join(rng.choice(WORDS) for _ in range(20)) + f" #{i}"
            f.write(json.dumps({"id": f"b{i}", "text": text, "label": rng.choice(LABELS)}) + "\n")
    return path.stat().st_size


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def cpu_seconds() -> tuple[float, float]:
    """(this process, the PostgreSQL backend serving it) CPU seconds: on a shared machine wall time is noisy."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    server = 0.0
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        try:  # only when the server runs on this machine
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            server = float("nan")
    return own.ru_utime + own.ru_stime, server


def timed_import(path: Path) -> tuple[float, float, float, str]:
    """Wall seconds, client CPU seconds, database-server CPU seconds, and the command's output."""
    out = StringIO()
    cpu_before, server_before = cpu_seconds()
    start = time.perf_counter()
    call_command("import_task", str(path), name=NAME, kind="classification", language="eng-Latn",
                 labels=",".join(LABELS), stdout=out)
    wall = time.perf_counter() - start
    cpu_after, server_after = cpu_seconds()
    return wall, cpu_after - cpu_before, server_after - server_before, out.getvalue().strip().replace("\n", " / ")


def report(label: str, n: int, timing: tuple[float, float, float, str]) -> None:
    wall, cpu, server, summary = timing
    server_text = f" + database server {server:.1f} s" if connection.vendor == "postgresql" else ""
    print(f"{label:<10} {wall:6.1f} s  {n / wall:9,.0f} items/s   (CPU: this process {cpu:.1f} s{server_text})")
    print(f"{'':<10} {summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the bench task afterwards")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    Task.objects.filter(name=NAME).delete()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        size = generate(path, args.items)
        rss_before = peak_rss_mb()
        first = timed_import(path)
        rss_import = peak_rss_mb()
        again = timed_import(path)
    n = Item.objects.filter(task__name=NAME).count()
    assert n == args.items, f"expected {args.items} items, found {n}"
    print(f"database: {connection.vendor}; file: {args.items:,} classification items, {size / 1e6:.1f} MB; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    report("import:", args.items, first)
    report("re-import:", args.items, again)
    print(f"peak RSS:  {rss_import:6.0f} MB after the import ({rss_before:.0f} MB before it; "
          f"{peak_rss_mb():.0f} MB after the re-import)")
    if not args.keep:
        Task.objects.filter(name=NAME).delete()


if __name__ == "__main__":
    main()
