#!/usr/bin/env python
"""Crowd study under load (issue 26, item 4): N participants arriving through one study link within a minute
and labelling at once, on the two ways the app runs:

- **sqlite**, the embedded default, as `scripts/run` (the README's run command) starts it: SQLite in WAL mode,
  `manage.py runserver` with DEBUG on, a real Celery worker on Redis;
- **postgres**, as production runs it (bench/bench_assignment.py's server): gunicorn with sync workers, DEBUG
  off, PostgreSQL, and the same real Celery worker.

Both run by default, one after the other (each in a process of its own, since Django binds its database at
start). The worker matters: every stored answer queues the task's debounced report, which the worker computes
while the participants keep answering.

For each, the script makes its own database, migrates it, seeds a classification task with enough items for
everyone's quota at overlap k, a batch and a generic-platform study link (no consent, no practice), and starts
the server and the worker.
Each participant is a thread with its own cookies that starts at a uniformly spread moment of --spread
seconds and goes the way a browser does: GET the link with `?participant=…` (following the redirects to its
first item: the *arrival*), then per item reads it for --think MIN,MAX seconds (uniform; 3 to 10 by default,
as people read; `--think 0,0` answers at once), POSTs the answer and follows the redirect to the next page (a
*submit*), until the completion page. The per-address arrival limit is raised for the run (every
participant comes from 127.0.0.1).

It prints p50/p95 of arrival and of submit, the status codes (any 5xx is a failure), and a database check:
no item answered by more than k people, and no answer lost (every submit the server accepted is a stored
Annotation; every participant who reached the completion page has the quota stored).

    python bench/bench_crowd.py                              # 300 participants within 60 s, quota 5, k = 3,
                                                             # each reading an item 3-10 s
    python bench/bench_crowd.py --think 0,0                  # answering at once (the earlier scenario)
    python bench/bench_crowd.py --participants 60 --spread 20 --backend postgres
    BENCH_DATABASE_URL=postgres://hume:hume@127.0.0.1:5432/hume_crowd_bench REDIS_URL=redis://127.0.0.1:6379/3 \
        python bench/bench_crowd.py

REDIS_URL (the settings' default otherwise) is the broker and the arrival counter; give the bench a Redis
database of its own. The SQLite file goes to a temporary folder that is removed afterwards.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_assignment import (  # noqa: E402
    HOST,
    migrate,
    recreate_database,
    request,
    server_env,
    start_gunicorn,
    stop,
)

DEFAULT_URL = "postgres://hume:hume@127.0.0.1:5432/hume_crowd_bench"
FIELD = r'name="{}" value="([^"]*)"'


def seed(url: str, participants: int, quota: int, overlap: int) -> tuple[str, int]:
    """A task with room for everyone (participants × quota / k items, plus a tenth), its batch and a study link;
    returns (link token, batch id)."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
    os.environ.setdefault("DEBUG", "true")
    import django

    django.setup()
    from annotation.core.batches import BatchSpec, create_batch
    from annotation.crowd import studies
    from tasks_app.models import Item, Task

    n_items = participants * quota // overlap + participants * quota // (10 * overlap) + quota
    task = Task.objects.create(name="CrowdBench", kind="classification", language="eng-Latn",
                               labels=["positive", "negative"], instructions="Positive or negative?")
    Item.objects.bulk_create(Item(task=task, uid=f"crowd-bench-{i}", external_id=str(i), position=i,
                                  payload={"text": f"Crowd bench sentence {i}."}) for i in range(n_items))
    batch, _ = create_batch(BatchSpec(task=task, overlap=overlap))
    link = studies.create_study_link(batch, studies.LinkSettings(quota=quota, minutes=30, completion_code="BENCH"))
    analyze()
    return link.token, batch.pk


def analyze() -> None:
    """Planner statistics, as autovacuum (PostgreSQL) or the app's own use leave them."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE" if connection.vendor == "sqlite" else "VACUUM ANALYZE")


def start_runserver(url: str, port: int, settings: str = "hume.settings") -> subprocess.Popen:
    """The embedded mode's web server, as scripts/run starts it: `manage.py runserver --noreload`, DEBUG on."""
    env = server_env(url) | {"DJANGO_SETTINGS_MODULE": settings, "DEBUG": "true"}
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"{HOST}:{port}", "--noreload"], cwd=REPO,
                              env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if request(port, "GET", "/healthz/", None, None)[0] == 200:
                return server
        except OSError:
            pass
        time.sleep(0.3)
    stop(server)
    raise RuntimeError("runserver did not answer /healthz/ within a minute")


def wait_for_worker(timeout: float = 60) -> None:
    from hume.lib.celery_app import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if app.control.ping(timeout=1):
            return
    raise RuntimeError("the Celery worker did not answer a ping within a minute")


def start_worker(url: str, debug: bool) -> subprocess.Popen:
    """A real Celery worker, as scripts/run starts it (beat inside, two processes)."""
    env = server_env(url) | {"DJANGO_SETTINGS_MODULE": "hume.settings", "DEBUG": "true" if debug else "false"}
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "hume", "worker", "-B", "--without-gossip",
                             "--without-mingle", "--loglevel=ERROR", "--concurrency=2"], cwd=REPO, env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL)


class Browser:
    """One participant's cookies and requests (a fresh connection each: sync workers close them anyway).
    Cookies are kept by hand: the production settings mark them Secure, and the bench speaks plain HTTP."""

    def __init__(self, port: int) -> None:
        self.port, self.cookies = port, {}

    def request(self, method: str, path: str, form: dict | None = None, *, htmx: bool = False) -> tuple[int, str, str]:
        """(status, body, final path), following redirects as a browser does (a POST's 302 becomes a GET);
        `htmx`: sent as the item page's form sends it with JavaScript (one request, the next page in the reply)."""
        for _ in range(5):
            hop = self.hop(method, path, form, htmx=htmx)
            if hop.location is None:
                return hop.status, hop.body, path
            path, method, form = hop.location, "GET", None
        return 599, "too many redirects", path

    def hop(self, method: str, path: str, form: dict | None = None, *, token: str = "",
            json_body: dict | None = None, htmx: bool = False) -> Hop:
        """One request, no redirect followed (an API `token` and a JSON body for the annotator loop; `htmx`: with
        the header htmx sends, as a participant's browser with JavaScript does)."""
        conn = http.client.HTTPConnection(HOST, self.port, timeout=120)
        headers = {"Host": HOST, "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers |= {"Content-Type": "application/x-www-form-urlencoded"}
        if token:
            headers |= {"Authorization": f"Token {token}", "Accept": "application/json"}
        if json_body is not None:
            body = json.dumps(json_body)
            headers |= {"Content-Type": "application/json"}
        if htmx:
            headers |= {"HX-Request": "true"}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read().decode()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        conn.close()
        location = None
        if response.status in (301, 302, 303):
            parts = urlsplit(response.getheader("Location"))
            location = parts.path + (f"?{parts.query}" if parts.query else "")
        return Hop(response.status, data, location, int(response.getheader("X-Queries") or -1))


@dataclass(frozen=True)
class Hop:
    status: int
    body: str
    location: str | None  # where a redirect points (path and query), None for any other answer
    queries: int  # the server's count (bench/query_count.py; -1 when the server does not count)


@dataclass
class Tally:
    arrivals: list[float] = field(default_factory=list)
    submits: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    accepted: int = 0
    completed: list[str] = field(default_factory=list)
    returned: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def participant(port: int, token: str, name: str, delay: float, tally: Tally,
                think: tuple[float, float] = (0.0, 0.0)) -> None:
    time.sleep(delay)
    try:
        _participate(port, token, name, tally, think)
    except OSError as error:  # a refused or timed-out connection counts, as a status of its own
        with tally.lock:
            tally.statuses[599] += 1
            tally.problems.append(f"{name}: {error!r}")


def _participate(port: int, token: str, name: str, tally: Tally, think: tuple[float, float]) -> None:
    browser = Browser(port)
    started = time.perf_counter()
    status, page, _ = browser.request("GET", f"/study/{token}/?participant={name}")
    with tally.lock:
        tally.arrivals.append(time.perf_counter() - started)
        tally.statuses[status] += 1
    # consent is off; the instructions page comes first
    for _ in range(100):
        if status != 200 or 'id="completion-code"' in page:
            break
        values = {key: re.search(FIELD.format(key), page) for key in ("csrfmiddlewaretoken", "tab", "item", "shown")}
        form = {key: found.group(1) for key, found in values.items() if found}
        if "item" not in form:
            form["action"] = "instructions"
            status, page, _ = browser.request("POST", f"/study/{token}/run/", form)
            with tally.lock:
                tally.statuses[status] += 1
            continue
        form |= {"action": "answer", "label": random.choice(["positive", "negative"])}
        time.sleep(random.uniform(*think))  # reading the item
        started = time.perf_counter()
        status, page, _ = browser.request("POST", f"/study/{token}/run/", form, htmx=True)  # one request
        with tally.lock:
            tally.submits.append(time.perf_counter() - started)
            tally.statuses[status] += 1
            tally.accepted += status == 200 and "errorlist" not in page
    with tally.lock:
        if 'id="completion-code">BENCH<' in page:
            tally.completed.append(name)
        elif 'id="study-returned"' in page:  # returned without a code (the batch full, issue 35)
            tally.returned.append(name)
            tally.problems.append(f"{name}: returned without a code")
        else:
            tally.problems.append(f"{name}: ended on status {status}")


def check_database(batch_id: int, overlap: int, quota: int, tally: Tally) -> list[str]:
    from django.db.models import Count

    from annotation.crowd.models import Participant
    from annotation.models import Annotation

    lines = []
    counts = (Annotation.objects.filter(batch_id=batch_id, skipped=False).values("item_id")
              .annotate(n=Count("pk")).values_list("n", flat=True))
    over = sum(n > overlap for n in counts)
    stored = Annotation.objects.filter(batch_id=batch_id).count()
    short = [p.platform_id for p in Participant.objects.filter(platform_id__in=tally.completed, stage="completed")
             if Annotation.objects.filter(annotator_id=p.annotator_id).count() != quota]
    lines.append(f"items over k = {overlap}: {over} (most answers on one item: {max(counts, default=0)})")
    lost = max(0, tally.accepted - stored)
    lines.append(f"answers stored: {stored}; submits accepted: {tally.accepted}; lost: {lost}")
    lines.append(f"completed participants without their {quota} answers stored: {len(short)}")
    return lines


def profile(args: argparse.Namespace, url: str, described: str, token: str) -> None:
    """--profile: one client, the server's CPU and queries per request (bench/crowd_profile.py)."""
    from bench import crowd_profile

    crowd_profile.add_practice(token)
    warm = crowd_profile.WARM_UP_PARTICIPANTS  # the warm-up's loop cycles take items too
    loop_batch, loop_tokens = crowd_profile.seed_loop(10, (args.participants + warm) * args.quota + 10)
    analyze()
    sqlite = url.startswith("sqlite")
    server = (start_runserver(url, args.port, "bench.profile_settings") if sqlite
              else start_gunicorn(url, args.port, args.workers, 0, settings="bench.profile_settings"))
    worker = start_worker(url, debug=sqlite)
    wait_for_worker()
    try:
        database = "" if sqlite else urlsplit(url).path.lstrip("/")
        lines = crowd_profile.profile(args, args.port, token, server.pid, worker.pid, database, loop_batch,
                                      loop_tokens)
    finally:
        stop(server)
        stop(worker)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"profile: {args.participants} participants one request at a time, quota {args.quota}, k = "
          f"{args.overlap}, one practice item, speed and straight-lining checks; {described}, a Celery worker; "
          f"{os.cpu_count()} CPUs, load {load}")
    print("\n".join(lines))
    sys.stdout.flush()


def percentiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return (f"p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms, max {max(values) * 1000:.0f} ms "
            f"(n = {len(values)})")


def think_range(text: str) -> tuple[float, float]:
    """--think MIN,MAX: two numbers of seconds, 0 <= MIN <= MAX."""
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN,MAX in seconds (such as 3,10), got {text!r}") from None
    if not 0 <= low <= high:
        raise argparse.ArgumentTypeError(f"expected 0 <= MIN <= MAX, got {text!r}")
    return low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, help="300 (40 with --profile)")
    parser.add_argument("--spread", type=float, default=60.0, help="seconds over which they arrive")
    parser.add_argument("--quota", type=int, default=5)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (postgres)")
    parser.add_argument("--think", type=think_range, default=(3.0, 10.0), metavar="MIN,MAX",
                        help="seconds a participant reads each item before answering, uniform (default 3,10)")
    parser.add_argument("--port", type=int, default=8131)
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"],
                        help="sqlite: the embedded default (runserver, as scripts/run); postgres: gunicorn")
    parser.add_argument("--profile", action="store_true",
                        help="server CPU ms and queries per request, crowd beside the annotator loop, one client "
                             "(bench/crowd_profile.py)")
    parser.add_argument("--profile-settle", type=float, default=15.0,
                        help="seconds the profile waits at the end for the debounced report runs")
    args = parser.parse_args()
    args.participants = args.participants or (40 if args.profile else 300)
    if len(args.backend) > 1:  # one process per backend: Django binds its database once per process
        for backend in args.backend:
            rest = [arg for arg in sys.argv[1:] if arg not in args.backend and arg != "--backend"]
            subprocess.run([sys.executable, __file__, *rest, "--backend", backend], check=True)
        return
    os.environ["CROWD_ARRIVALS_PER_MINUTE"] = str(10 * args.participants)
    folder = tempfile.mkdtemp(prefix="hume-crowd-bench-")
    try:
        if args.backend == ["sqlite"]:
            url = f"sqlite:///{folder}/crowd_bench.sqlite3"
            described = "SQLite, runserver (the embedded default, as scripts/run)"
        else:
            url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
            recreate_database(url)
            described = f"PostgreSQL, gunicorn {args.workers} sync workers"
        bench(args, url, described)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench(args: argparse.Namespace, url: str, described: str) -> None:
    sqlite = url.startswith("sqlite")
    migrate(url)
    if args.profile:  # room for the profile's warm-up participants too (bench/crowd_profile.py)
        from bench.crowd_profile import WARM_UP_PARTICIPANTS

        token, _ = seed(url, args.participants + WARM_UP_PARTICIPANTS, args.quota, args.overlap)
        return profile(args, url, described, token)
    token, batch_id = seed(url, args.participants, args.quota, args.overlap)
    server = start_runserver(url, args.port) if sqlite else start_gunicorn(url, args.port, args.workers, 0)
    worker = start_worker(url, debug=sqlite)
    wait_for_worker()
    tally = Tally()
    try:
        threads = [threading.Thread(target=participant, args=(args.port, token, f"p{i:04d}",
                                                              random.uniform(0, args.spread), tally, args.think))
                   for i in range(args.participants)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    finally:
        stop(server)
        stop(worker)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.participants} participants within {args.spread:.0f} s, quota {args.quota}, k = {args.overlap}, "
          f"reading {args.think[0]:g}-{args.think[1]:g} s per item, {described}, a Celery worker; {wall:.1f} s in "
          f"all; {os.cpu_count()} CPUs, load {load}")
    print(f"arrival (link to first page): {percentiles(tally.arrivals)}")
    print(f"submit (answer and next page): {percentiles(tally.submits)}")
    fivexx = sum(n for code, n in tally.statuses.items() if code >= 500)
    print(f"statuses: {dict(sorted(tally.statuses.items()))}; 5xx: {fivexx}")
    print(f"completed: {len(tally.completed)} of {args.participants} (returned without a code: "
          f"{len(tally.returned)})")
    for line in check_database(batch_id, args.overlap, args.quota, tally) + tally.problems[:10]:
        print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
