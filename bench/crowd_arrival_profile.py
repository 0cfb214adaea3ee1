#!/usr/bin/env python
"""A crowd participant's arrival, step by step, in one warm process (issue 36): the CPU and the queries of the
link's request (a new participant: the account, the sweep of overdue participants, the full-study probe, the
session) and of the page it redirects to, beside the annotator loop's cycle (`next` + `answer`) in the same
process, and with --cprofile where the link's CPU goes, by function of the project.

bench/bench_crowd.py --profile measures the same requests through a real server (gunicorn or runserver) from
/proc, with the database's CPU; this script leaves the server out (Django's test client calls the app in this
process), so its figure is the app's own Python and the database driver, and it runs in seconds. Nothing is
measured before the process is warm: its first requests load the URL tree, compile the templates and prepare
the statements (printed apart).

    python bench/crowd_arrival_profile.py                    # PostgreSQL (BENCH_DATABASE_URL), 40 arrivals
    python bench/crowd_arrival_profile.py --cprofile         # and the link's CPU by function
    python bench/crowd_arrival_profile.py --backend sqlite

It makes its own database (BENCH_DATABASE_URL, or a SQLite file in a temporary folder), migrates it and seeds
it as bench/bench_crowd.py does (a classification task, a generic-platform study link, quota 5, k = 3), plus
the profile's practice item and checks (bench/crowd_profile.py) and a loop task of its own.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_assignment import HOST, migrate, recreate_database, server_env  # noqa: E402

DEFAULT_URL = "postgres://hume:hume@127.0.0.1:5432/hume_crowd_arrival_bench"
WARM = 5  # arrivals and loop cycles before anything is measured


def measure(calls: list) -> float:
    """CPU milliseconds of this process per call."""
    started = time.process_time()
    for call in calls:
        call()
    return 1000 * (time.process_time() - started) / len(calls)


def queries(call) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrivals", type=int, default=40)
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--cprofile", action="store_true", help="the link's CPU by function of the project")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="hume-crowd-arrival-")
    try:
        if args.backend == "sqlite":
            url = f"sqlite:///{folder}/crowd_arrival.sqlite3"
        else:
            url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
            recreate_database(url)
        migrate(url)
        os.environ.update(server_env(url) | {"CROWD_ARRIVALS_PER_MINUTE": str(100 * args.arrivals)})
        profile(args, url)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def profile(args: argparse.Namespace, url: str) -> None:
    from bench.bench_crowd import seed
    from bench.crowd_profile import add_practice, seed_loop

    n = args.arrivals
    token, _ = seed(url, 3 * n + 3 * WARM, 5, 3)
    add_practice(token)
    loop_batch, loop_tokens = seed_loop(10, 3 * n + 3 * WARM)
    import json

    from django.test import Client

    started = time.process_time()
    people: list[Client] = []

    def link(name: str) -> None:
        client = Client(HTTP_HOST=HOST)
        response = client.get(f"/study/{token}/?participant={name}")
        assert response.status_code == 302, (response.status_code, response.content[:500])
        client.tab = response["Location"]
        people.append(client)

    def page(client: Client) -> None:
        response = client.get(client.tab)
        assert response.status_code == 200 and b"instructions" in response.content, response.status_code

    loop = [Client(HTTP_HOST=HOST, HTTP_AUTHORIZATION=f"Token {key}") for key in loop_tokens]
    answers: list[tuple[Client, str]] = []

    def loop_next(i: int) -> None:
        client = loop[i % len(loop)]
        response = client.get(f"/api/v1/batches/{loop_batch}/next/")
        assert response.status_code == 200, response.content[:300]
        answers.append((client, response.json()["answer_url"]))

    def loop_answer() -> None:
        client, answer_url = answers.pop()
        response = client.post(answer_url, json.dumps({"value": "positive"}), content_type="application/json")
        assert response.status_code in (200, 201), response.content[:300]

    for i in range(WARM):
        link(f"warm{i}")
        page(people[-1])
        loop_next(i)
        loop_answer()
    warm_ms = 1000 * (time.process_time() - started)
    rows = [("arrival: the link (a new participant; redirect)",
             measure([lambda i=i: link(f"p{i:04d}") for i in range(n)]), queries(lambda: link("counted-link")))]
    measured = people[WARM:WARM + n]
    rows.append(("arrival: its page (instructions)", measure([lambda c=c: page(c) for c in measured]),
                 queries(lambda: page(people[-1]))))
    cycle_next = cycle_answer = 0.0
    for i in range(n):  # each annotator answers the item `next` gave it before asking again
        cycle_next += measure([lambda i=i: loop_next(i)]) / n
        cycle_answer += measure([loop_answer]) / n
    next_queries = queries(lambda: loop_next(0))
    rows += [("loop: next", cycle_next, next_queries), ("loop: answer", cycle_answer, queries(loop_answer))]
    from django.db import connection

    print(f"crowd arrival, in one process ({connection.vendor}, DEBUG off, Django's test client), {n} arrivals "
          f"after {WARM} to warm it (those took {warm_ms:.0f} ms CPU in all); {os.cpu_count()} CPUs, load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("| request | CPU ms | queries |\n|---|---|---|")
    for label, cpu_ms, n_queries in rows:
        print(f"| {label} | {cpu_ms:.1f} | {n_queries} |")
    arrival = rows[0][1] + rows[1][1]
    cycle = cycle_next + cycle_answer
    print(f"| **arrival (link + page)** | **{arrival:.1f}** | |")
    print(f"| **loop cycle (next + answer)** | **{cycle:.1f}** | |")
    print(f"arrival / loop cycle: {arrival / cycle:.1f}x")
    if args.cprofile:
        print_cprofile(lambda i: link(f"c{i:04d}"), n)


def print_cprofile(call, n: int) -> None:
    """The link's request under cProfile: the project's functions (and the session's save) by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(n):
        call(i)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(r"(annotation|hume)/|sessions/backends/db", 30)
    print(out.getvalue())


if __name__ == "__main__":
    main()
