#!/usr/bin/env python
"""The annotator loop's work per cycle in one process, for one or more checkouts: counts a shared machine does not
blur (issue 38's loop slowdown was found with them, docs/crowd.md "The annotation loop beside Label Studio").

A cycle is what bench/bench_loop_vs_label_studio.py times over HTTP: GET /api/v1/batches/<id>/next/, then POST the
answer to its `answer_url`, here through Django's test client (the middleware and views, no web server). Each
checkout gets a database of its own, recreated, migrated and seeded as that bench seeds it (4,000 items, k = 2,
10 annotators taking turns); after 20 warm-up cycles (code paths loaded, statements prepared) the script prints
per cycle:

- Python function calls (cProfile over --cycles cycles): the same code gives the same count, whatever the load;
- the app's CPU and its PostgreSQL backend's CPU (from /proc; these move with the machine's load);
- the database's counters (pg_stat_database: transactions, buffer hits, tuples returned) over every cycle run.

The report's debounce window is set to an hour (HUME_REPORT_DEBOUNCE_SECONDS), so that no window opens during the
run and every cycle does the same work.

    python bench/bench_loop_calls.py --app-dir ../before --app-dir .      # two checkouts, one after the other
    BENCH_DATABASE_URL=postgres://hume:hume@127.0.0.1:5432/hume_loop_calls python bench/bench_loop_calls.py
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_assignment import recreate_database  # noqa: E402
from bench.bench_loop_vs_label_studio import SEED_APP, app_env, database_url  # noqa: E402

DEFAULT_URL = "postgres://hume:hume@127.0.0.1:5432/hume_loop_calls"
WARM = 20
COUNTERS = ("xact_commit", "blks_hit", "tup_returned")

# Run inside a checkout: the cycles, then one JSON line with the per-cycle figures.
DRIVE = """
import cProfile, json, os, pstats, sys, time
import django
django.setup()
from django.db import connection
from django.test import Client
(batch_id, tokens), n, warm = json.loads(sys.argv[1])[0], int(sys.argv[2]), int(sys.argv[3])
clients = [Client(HTTP_AUTHORIZATION=f"Token {token}") for token in tokens]
def cycle(i):
    client = clients[i % len(clients)]
    got = client.get(f"/api/v1/batches/{batch_id}/next/")
    assert got.status_code == 200, got.content[:300]
    answered = client.post(got.json()["answer_url"], {"value": "positive"}, content_type="application/json")
    assert answered.status_code == 201, answered.content[:300]
for i in range(warm):
    cycle(i)
with connection.cursor() as cursor:
    cursor.execute("SELECT pg_backend_pid()")
    backend = cursor.fetchone()[0]
def backend_cpu():
    fields = open(f"/proc/{backend}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
cpu, pg = time.process_time(), backend_cpu()
for i in range(warm, warm + n):
    cycle(i)
cpu, pg = time.process_time() - cpu, backend_cpu() - pg
profile = cProfile.Profile()
profile.enable()
for i in range(warm + n, warm + 2 * n):
    cycle(i)
profile.disable()
print(json.dumps({"cpu_ms": 1000 * cpu / n, "pg_ms": 1000 * pg / n, "calls": pstats.Stats(profile).total_calls / n}))
"""


def counters(url: str) -> dict[str, int]:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        row = conn.execute(f"SELECT {', '.join(COUNTERS)} FROM pg_stat_database WHERE datname = %s", (name,)).fetchone()
    return dict(zip(COUNTERS, row, strict=True))


def measure(app_dir: Path, url: str, cycles: int) -> str:
    env = app_env(url) | {"ALLOWED_HOSTS": "testserver", "HUME_REPORT_DEBOUNCE_SECONDS": "3600"}
    recreate_database(url)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=app_dir, env=env, check=True)
    seeded = subprocess.run([sys.executable, "-c", SEED_APP, json.dumps([[10], 4000, 2])], cwd=app_dir,
                            env=env | {"DEBUG": "true"}, check=True, capture_output=True, text=True)
    runs = seeded.stdout.strip().splitlines()[-1]
    before = counters(url)
    driven = subprocess.run([sys.executable, "-c", DRIVE, runs, str(cycles), str(WARM)], cwd=app_dir,
                            env=env | {"PYTHONPATH": str(app_dir)}, check=True, capture_output=True, text=True)
    time.sleep(1)  # the driver's backend has exited and sent its statistics
    after, figures = counters(url), json.loads(driven.stdout.strip().splitlines()[-1])
    total = WARM + 2 * cycles
    db = ", ".join(f"{name} {(after[name] - before[name]) / total:.1f}" for name in COUNTERS)
    return (f"{figures['calls']:7.0f} Python calls, app CPU {figures['cpu_ms']:5.2f} ms, PostgreSQL backend CPU "
            f"{figures['pg_ms']:5.2f} ms per cycle; database per cycle: {db}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", action="append", type=Path, default=[], help="a checkout (repeat; default: this)")
    parser.add_argument("--cycles", type=int, default=100, help="cycles timed, then as many profiled")
    args = parser.parse_args()
    prefix = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    print(f"one process, Django's test client, PostgreSQL, 4000 items, k = 2, {args.cycles} cycles "
          f"(load {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    for n, app_dir in enumerate([path.resolve() for path in args.app_dir] or [REPO], start=1):
        print(f"{app_dir.name:16s} {measure(app_dir, database_url(prefix, str(n)), args.cycles)}", flush=True)


if __name__ == "__main__":
    main()
