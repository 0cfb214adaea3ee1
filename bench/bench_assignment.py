#!/usr/bin/env python
"""Throughput of the assignment engine over real HTTP: next + submit cycles against gunicorn on PostgreSQL.

The script creates (or empties) its own database, migrates it, seeds an earlier finished study (so tables
are not empty), a classification task, annotators with API tokens and one batch (k = 2) per run, runs
VACUUM ANALYZE (the state autovacuum keeps a live database in), starts gunicorn as production runs it
(3 sync workers, DEBUG off, a real SECRET_KEY, ALLOWED_HOSTS, no TLS redirect on loopback, persistent DB
connections) and lets N annotator threads loop on the annotator API — GET /api/v1/batches/<id>/next/ then
POST /api/v1/batches/<id>/items/<item_id>/answer/ — for a fixed time.

For 10 and 40 concurrent annotators it prints: a reference first (the issue's yardstick, "a bare Django
view pair doing one SELECT and one INSERT": the same clients, same server, same moment, each cycle a GET of a
plain view reading one row and a POST of one inserting one; bench/reference_urls.py), then cycles/s
(= items answered per second) with the p50/p95 of one next+answer cycle, the CPU each part spent per
cycle (gunicorn workers, the bench database's PostgreSQL backends, this client; read from /proc) and what
that allows on two idle cores, and a database check: no item above k, no duplicate answer, every 201 stored.
Every line carries the load averages: the machine is shared, throughput moves with other people's work, CPU
per cycle much less.

Worker class: sync workers (the default, and the README's deployment) gave the best and fairest figures.
gthread workers (--threads N) keep connections alive, which saves the bare pair some CPU, but not the
annotator cycle, and with 40 annotators their p95 was 2-3 times worse (a few connections wait while others
are served); see docs/batches.md, "Performance".

    python bench/bench_assignment.py                        # 10 and 40 annotators, 15 s each
    python bench/bench_assignment.py --concurrency 10 --seconds 30
    python bench/bench_assignment.py --threads 2            # gthread workers, 2 threads each
    python bench/bench_assignment.py --direct               # the engine alone, no web stack
    BENCH_DATABASE_URL=postgres://hume:hume@127.0.0.1:5432/hume_assign_bench python bench/bench_assignment.py

Targets (issue): ≥ 200 cycles/s at 10 and 40 annotators, p95 < 100 ms at 10.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://hume:hume@127.0.0.1:5432/hume_assign_bench"
HOST = "127.0.0.1"


def recreate_database(url: str) -> None:
    """A clean database of the bench's own, so figures never depend on what another run left behind."""
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def server_env(url: str) -> dict[str, str]:
    # The app's own settings plus the yardstick views (bench/reference_settings.py).
    return {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "bench.reference_settings",
            "DEBUG": "false", "SECRET_KEY": secrets.token_urlsafe(64),
            "ALLOWED_HOSTS": HOST, "SECURE_SSL_REDIRECT": "false", "CONN_MAX_AGE": "600", "LOG_LEVEL": "ERROR"}


def migrate(url: str) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO,
                   env=server_env(url), check=True)


def seed(url: str, runs: list[int], items: int, overlap: int) -> list[tuple[int, list[str]]]:
    """One task, and per run a batch of `items` items with its own annotators (tokens); returns
    [(batch id, [token, ...])]. Separate annotators per run, since an annotator answers an item once."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
    os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from annotation.core.batches import BatchSpec, create_batch
    from annotation.models import Annotator, AnnotatorLanguage
    from tasks_app.models import Item, Task

    reference_table()
    task = Task.objects.create(name="BenchSentiment", kind="classification", language="eng-Latn",
                               labels=["positive", "negative"])
    Item.objects.bulk_create(Item(task=task, uid=f"bench-{i}", external_id=str(i), position=i,
                                  payload={"text": f"Bench sentence number {i}, neither good nor bad."})
                             for i in range(items))
    batches, veterans = [], []
    for run, concurrency in enumerate(runs):
        tokens, annotators = [], []
        for i in range(concurrency):
            user = User.objects.create_user(username=f"bench{run}-{i}")
            annotator = Annotator.objects.create(user=user)
            AnnotatorLanguage.objects.create(annotator=annotator, language="eng-Latn")
            annotators.append(annotator)
            tokens.append(Token.objects.create(user=user).key)
        batch, _ = create_batch(BatchSpec(task=task, name=f"bench run {run}", overlap=overlap), annotators=annotators)
        batches.append((batch.pk, tokens))
        veterans += annotators
    history(items, veterans)
    vacuum_analyze()
    return batches


EARLIER_ANSWERS = 1000  # answers each bench annotator gave in the earlier study


def history(items: int, veterans: list, annotators: int = 3) -> None:
    """An earlier, finished study in the same database (another task, every item answered by `annotators`
    people, and the first EARLIER_ANSWERS of them by every bench annotator too), so the tables are not
    empty when PostgreSQL plans and the annotators carry answers from other studies, as HUME's did from
    task to task: a study database in use has answers, and loop requests must not grow with them."""
    from django.contrib.auth.models import User

    from annotation.models import Annotation, Annotator, Batch, BatchItem
    from tasks_app.models import Item, Task

    task = Task.objects.create(name="BenchHistory", kind="classification", language="eng-Latn",
                               labels=["positive", "negative"])
    done = Item.objects.bulk_create(Item(task=task, uid=f"history-{i}", external_id=str(i), position=i,
                                         payload={"text": f"An earlier sentence {i}."}) for i in range(items))
    batch = Batch.objects.create(task=task, name="history", overlap=annotators + len(veterans), is_open=False)
    BatchItem.objects.bulk_create(BatchItem(batch=batch, item=item, position=i,
                                            human_answers=annotators + (len(veterans) if i < EARLIER_ANSWERS else 0))
                                  for i, item in enumerate(done))
    people = [Annotator.objects.create(user=User.objects.create_user(username=f"history-{n}"))
              for n in range(annotators)]
    Annotation.objects.bulk_create(Annotation(item=item, annotator=person, batch=batch, value="negative",
                                              time_spent_ms=5000, source="api") for item in done for person in people)
    Annotation.objects.bulk_create(Annotation(item=item, annotator=person, batch=batch, value="positive",
                                              time_spent_ms=5000, source="api")
                                   for item in done[:EARLIER_ANSWERS] for person in veterans)


def reference_table() -> None:
    """The table the yardstick's INSERT view writes to (bench/reference_urls.py)."""
    from django.db import connection

    from bench.reference_urls import WRITES_TABLE

    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {WRITES_TABLE} (id bigserial PRIMARY KEY, at timestamptz NOT NULL, "
                       "body text NOT NULL)")


def vacuum_analyze() -> None:
    """Planner statistics and a vacuumed heap, as autovacuum leaves them within a minute of an import in
    production. Without statistics PostgreSQL plans the next-item query for a 12-row batch and walks all 2000
    items per request (50 ms)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def start_gunicorn(url: str, port: int, workers: int, threads: int, *,
                   settings: str = "bench.reference_settings") -> subprocess.Popen:
    """The README's deployment: `gunicorn hume.wsgi --workers 3` (sync workers); --threads N (N >= 1) tries
    gthread workers, which keep connections alive."""
    cmd = [sys.executable, "-m", "gunicorn", "hume.wsgi:application", "--workers", str(workers), "--bind",
           f"{HOST}:{port}", "--backlog", "2048", "--log-level", "warning"]
    if threads:
        cmd += ["--worker-class", "gthread", "--threads", str(threads)]
    server = subprocess.Popen(cmd, cwd=REPO, env=server_env(url) | {"DJANGO_SETTINGS_MODULE": settings},
                              start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status, _ = request(port, "GET", "/healthz/", None, None)
            if status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.3)
    stop(server)
    raise RuntimeError("gunicorn did not answer /healthz/ within a minute")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


class Client:
    """One annotator's HTTP/1.1 connection, kept open between requests when the server allows it (gthread
    workers keep connections alive, as browsers and requests.Session use them; sync workers close each one).
    Deliberately minimal (a socket, no http.client): the client shares the 2 cores with the server it measures,
    and http.client's header parsing cost more CPU per request than the bare /healthz/ view."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.buffer = b""

    def request(self, method: str, path: str, token: str | None, body: dict | None) -> tuple[int, bytes]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nAccept: application/json\r\n"
        if token:
            head += f"Authorization: Token {token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        if self.sock is None:
            self.sock = socket.create_connection((HOST, self.port), timeout=60)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.sendall(head.encode() + b"\r\n" + payload)
            status, headers = self._head()
            data = self._read(int(headers.get(b"content-length", b"0")))
        except OSError:
            self.close()
            raise
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return status, data

    def _head(self) -> tuple[int, dict[bytes, bytes]]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        headers = dict(line.split(b":", 1) for line in lines[1:])
        return int(lines[0].split()[1]), {k.strip().lower(): v.strip() for k, v in headers.items()}

    def _read(self, length: int) -> bytes:
        while len(self.buffer) < length:
            self._fill()
        data, self.buffer = self.buffer[:length], self.buffer[length:]
        return data

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection mid-response")
        self.buffer += chunk

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock, self.buffer = None, b""


def request(port: int, method: str, path: str, token: str | None, body: dict | None) -> tuple[int, bytes]:
    """One request on a connection of its own."""
    client = Client(port)
    try:
        return client.request(method, path, token, body)
    finally:
        client.close()


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def annotate(port: int, batch_id: int, token: str, until: float, tally: Tally) -> None:
    """A scripted annotator: next, answer, repeat until time is up or nothing is left for them."""
    client = Client(port)
    try:
        _annotate(client, batch_id, token, until, tally)
    finally:
        client.close()


def _annotate(client: Client, batch_id: int, token: str, until: float, tally: Tally) -> None:
    while time.monotonic() < until:
        started = time.perf_counter()
        status, body = client.request("GET", f"/api/v1/batches/{batch_id}/next/", token, None)
        if status == 204:
            return
        if status != 200:
            with tally.lock:
                tally.statuses[f"next {status}"] += 1
                tally.errors.append(body[:200].decode(errors="replace"))
            return
        answer_url = json.loads(body)["answer_url"]
        status, body = client.request("POST", answer_url, token, {"value": "positive"})
        elapsed = time.perf_counter() - started
        with tally.lock:
            if status == 201:
                tally.latencies.append(elapsed)
            else:
                tally.statuses[f"answer {status}"] += 1
                tally.errors.append(f"{status}: {body[:200].decode(errors='replace')}")


def bare_pair(port: int, batch_id: int, token: str, until: float, tally: Tally) -> None:
    """The reference: a bare Django view pair, one SELECT (GET) and one INSERT (POST) per cycle, measured on
    the same server, machine and moment, so the engine's figure can be read against what the box gives."""
    client = Client(port)
    while time.monotonic() < until:
        started = time.perf_counter()
        first, _ = client.request("GET", "/bench/read/1/", None, None)
        second, _ = client.request("POST", "/bench/write/", None, {"value": "positive"})
        with tally.lock:
            if (first, second) == (200, 201):
                tally.latencies.append(time.perf_counter() - started)
            else:
                tally.statuses[f"reference {first}/{second}"] += 1
    client.close()


def annotate_direct(port: int, batch_id: int, token: str, until: float, tally: Tally) -> None:
    """The same cycle without HTTP: the engine called from a thread with its own DB connection, as the loop's
    views call it (next, progress, submit, progress). Separates the engine's cost from the web stack's."""
    from django.db import connections
    from rest_framework.authtoken.models import Token

    from annotation.core import assignment
    from annotation.models import Batch

    annotator = Token.objects.select_related("user__annotator").get(key=token).user.annotator
    batch = Batch.objects.select_related("task").get(pk=batch_id)
    try:
        while time.monotonic() < until:
            started = time.perf_counter()
            item = assignment.next_item(annotator, batch)
            if item is None:
                return
            assignment.annotator_progress(annotator, batch)
            assignment.submit_answer(annotator, batch, item, "positive", source="api")
            assignment.annotator_progress(annotator, batch)
            with tally.lock:
                tally.latencies.append(time.perf_counter() - started)
    finally:
        connections.close_all()


def run(port: int, batch_id: int, tokens: list[str], seconds: float, client=annotate) -> tuple[Tally, float]:
    tally = Tally()
    started = time.monotonic()
    until = started + seconds
    threads = [threading.Thread(target=client, args=(port, batch_id, token, until, tally)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally, time.monotonic() - started


class CpuMeter:
    """CPU seconds spent by the gunicorn workers, the bench database's PostgreSQL backends and this client
    during a run, read from /proc (Linux). On a shared machine throughput moves with other people's load; CPU
    per cycle does not, and 2 cores divided by it says what the stack can do on an idle 2-core machine."""

    def __init__(self, server_pid: int, database: str) -> None:
        self.server_pid, self.database = server_pid, database
        self.start = self._sample()

    def _sample(self) -> dict[str, dict[int, float]]:
        groups: dict[str, dict[int, float]] = {"gunicorn": {}, "postgres": {}, "client": {}}
        tick = os.sysconf("SC_CLK_TCK")
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            group = ("gunicorn" if int(stat[1]) == self.server_pid else
                     "postgres" if cmdline.startswith("postgres:") and f" {self.database} " in cmdline else
                     "client" if int(pid) == os.getpid() else None)
            if group:
                groups[group][int(pid)] = (int(stat[11]) + int(stat[12])) / tick
        return groups

    def per_cycle(self, cycles: int) -> str:
        end = self._sample()
        ms = {group: 1000 * sum(cpu - self.start[group].get(pid, 0.0) for pid, cpu in pids.items()) / max(cycles, 1)
              for group, pids in end.items()}
        total = sum(ms.values())
        capacity = f" → {2000 / total:.0f} cycles/s if they had 2 cores to themselves" if total else ""
        return (f"CPU per cycle: gunicorn {ms['gunicorn']:.1f} ms, PostgreSQL {ms['postgres']:.1f} ms, "
                f"client {ms['client']:.1f} ms{capacity}")


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def check_database(batch_id: int, overlap: int, stored: int) -> str:
    """The invariants under load, read back from PostgreSQL."""
    from django.db.models import Count

    from annotation.models import Annotation

    answers = Annotation.objects.filter(batch_id=batch_id)
    per_item = answers.values("item_id").annotate(n=Count("pk")).values_list("n", flat=True)
    pairs = answers.values_list("item_id", "annotator_id")
    above_k = sum(1 for n in per_item if n > overlap)
    duplicates = answers.count() - len(set(pairs))
    lost = stored - answers.count()
    return f"items above k: {above_k}, duplicate answers: {duplicates}, 201s not in the database: {lost}"


def load() -> str:
    """The machine is shared: every figure comes with the load averages (1, 5, 15 min) it was taken under."""
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def report(label: str, tally: Tally, elapsed: float) -> None:
    ms = [1000 * x for x in tally.latencies]
    if not ms:
        print(f"{label}: no complete cycle; statuses {dict(tally.statuses)}")
        return
    others = f"; other statuses {dict(tally.statuses)}" if tally.statuses else ""
    print(f"{label}: {len(ms) / elapsed:6.1f} cycles/s  p50 {percentile(ms, 50):6.1f} ms  "
          f"p95 {percentile(ms, 95):6.1f} ms  ({len(ms)} cycles, {load()}{others})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 40])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--items", type=int, default=4000,
                        help="items per batch (enough that no run ends early: 8,000 answers at k = 2)")
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="gthread workers with this many threads (0: sync)")
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help="skip the bare-pair reference runs")
    parser.add_argument("--direct", action="store_true",
                        help="call the engine from threads with their own DB connections instead of over HTTP")
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)

    recreate_database(url)
    migrate(url)
    batches = seed(url, args.concurrency, args.items, args.overlap)
    if args.direct:
        print(f"engine called directly from threads (no HTTP), PostgreSQL, k = {args.overlap}, {args.items} items,"
              f" {args.seconds:.0f} s per run ({load()} before)")
        for (batch_id, tokens), concurrency in zip(batches, args.concurrency, strict=True):
            tally, elapsed = run(args.port, batch_id, tokens, args.seconds, client=annotate_direct)
            report(f"{concurrency:3d} threads, next + submit (+ progress ×2)", tally, elapsed)
            print(f"     {check_database(batch_id, args.overlap, len(tally.latencies))}")
        return
    server = start_gunicorn(url, args.port, args.workers, args.threads)
    try:
        for batch_id, tokens in batches:  # warm every worker's DB connection and code paths
            request(args.port, "GET", f"/api/v1/batches/{batch_id}/next/", tokens[0], None)
        kind = f"gthread ×{args.threads}" if args.threads else "sync"
        print(f"gunicorn {args.workers} {kind} workers, PostgreSQL, k = {args.overlap}, {args.items} items per batch,"
              f" {args.seconds:.0f} s per run, {os.cpu_count()} CPUs ({load()} before)")
        for (batch_id, tokens), concurrency in zip(batches, args.concurrency, strict=True):
            if args.reference:
                meter = CpuMeter(server.pid, urlparse(url).path.lstrip("/"))
                tally, elapsed = run(args.port, batch_id, tokens, args.seconds, client=bare_pair)
                report(f"{concurrency:3d} clients, bare pair (SELECT view + INSERT view)", tally, elapsed)
                print(f"     {meter.per_cycle(len(tally.latencies))}")
            meter = CpuMeter(server.pid, urlparse(url).path.lstrip("/"))
            tally, elapsed = run(args.port, batch_id, tokens, args.seconds)
            report(f"{concurrency:3d} annotators, next + answer", tally, elapsed)
            print(f"     {meter.per_cycle(len(tally.latencies))}")
            print(f"     {check_database(batch_id, args.overlap, len(tally.latencies))}")
            for error in tally.errors[:5]:
                print(f"     error: {error}")
    finally:
        stop(server)


if __name__ == "__main__":
    main()
