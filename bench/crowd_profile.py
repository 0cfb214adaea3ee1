"""bench/bench_crowd.py --profile: where a crowd participant's request goes, beside the annotator loop's.

One client thread, one request at a time, so the server's CPU between two readings of /proc belongs to the
requests sent in between (the machine may be shared and busy: wall-clock latency then means little, CPU
milliseconds per request much more). For each kind of request it prints the web server's CPU (runserver, or
the gunicorn master and its workers), the PostgreSQL backends' CPU (the bench database's; SQLite runs inside
the web process) and the queries the request ran (bench/query_count.py, a response header).

Participants (a task with one practice item, quota 5, k = 3, the speed and straight-lining checks on) go
through the arrival (the link's redirect, then the page it points to), the instructions, the practice item and
its feedback page, then the work items; each work submit is one POST sent as the item page's form sends it with
JavaScript (htmx: the answer stored and the next page in the reply; the last one's reply is the completion page).
The annotator loop's cycle is GET /api/v1/batches/<id>/next/ then POST its answer_url (as
bench/bench_assignment.py drives it), run between the participants' rounds so that both see the same machine.
The Celery worker's CPU over the whole profile (the debounced report runs the answers queue), per answer
stored, is the last line.

Nothing is measured before the server is warm: a web process's first requests pay once for what it keeps
(the URL tree's imports, 1.7 s; the templates; the prepared statements), about 2 s of CPU per gunicorn worker,
which the first measured row used to carry with whatever was left of the workers' boot (the arrival's link then
read 90-245 ms of web CPU, by how many participants shared the cost; docs/crowd.md). So the profile
first waits until the server's processes are quiet (every worker booted), then sends WARM_UP_PARTICIPANTS
participants through a whole run at once and as many loop cycles (every worker serves some), waits again, and
prints that warm-up's CPU apart.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench.bench_crowd import FIELD, Browser, Hop

TICK = os.sysconf("SC_CLK_TCK")
SUBMIT = "submit: the answer and the next page (one request)"
# three per gunicorn worker (3 by default), at once, so that every worker serves some of the warm-up
WARM_UP_PARTICIPANTS = 9



class Cpu:
    """CPU seconds of the processes under `root` (itself and its children), and of the PostgreSQL backends of
    `database`, read from /proc."""

    def __init__(self, root: int, database: str) -> None:
        self.root, self.database = root, database

    def read(self) -> tuple[float, float]:
        own = postgres = 0.0
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            seconds = (int(stat[11]) + int(stat[12])) / TICK
            if int(pid) == self.root or int(stat[1]) == self.root:
                own += seconds
            elif self.database and cmdline.startswith("postgres:") and f" {self.database} " in cmdline:
                postgres += seconds
        return own, postgres


class Profile:
    """Per kind of request: how many, the web CPU, the PostgreSQL CPU and the queries they spent."""

    def __init__(self, cpu: Cpu) -> None:
        self.cpu = cpu
        self.rows: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])

    def measure(self, label: str, calls: list) -> list[Hop]:
        """Run `calls` (each returns a Hop) one after the other and charge them to `label`."""
        web, postgres = self.cpu.read()
        hops = [call() for call in calls]
        web_after, postgres_after = self.cpu.read()
        row = self.rows[label]
        row[0] += len(hops)
        row[1] += web_after - web
        row[2] += postgres_after - postgres
        row[3] += sum(hop.queries for hop in hops)
        bad = [hop.status for hop in hops if hop.status >= 400]
        if bad:
            raise RuntimeError(f"{label}: statuses {bad[:5]}: {hops[0].body[:300]}")
        return hops

    def per_request(self, label: str) -> tuple[float, float, float]:
        n, web, postgres, queries = self.rows[label]
        return 1000 * web / n, 1000 * postgres / n, queries / n

    def table(self, sums: dict[str, list[str]]) -> list[str]:
        lines = ["| request | n | web CPU ms | PostgreSQL CPU ms | queries |", "|---|---|---|---|---|"]
        for label in self.rows:
            web, postgres, queries = self.per_request(label)
            lines.append(f"| {label} | {self.rows[label][0]} | {web:.1f} | {postgres:.1f} | {queries:.1f} |")
        for label, parts in sums.items():
            figures = [self.per_request(part) for part in parts]
            web, postgres, queries = (sum(f[i] for f in figures) for i in range(3))
            lines.append(f"| **{label}** | | **{web:.1f}** | **{postgres:.1f}** | **{queries:.1f}** |")
        return lines


def seed_loop(n_annotators: int, n_items: int) -> tuple[int, list[str]]:
    """A task of its own for the annotator loop, its batch (k = 1) and annotators with API tokens."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from annotation.core.batches import BatchSpec, create_batch
    from annotation.models import Annotator, AnnotatorLanguage
    from tasks_app.models import Item, Task

    task = Task.objects.create(name="LoopBench", kind="classification", language="eng-Latn",
                               labels=["positive", "negative"])
    Item.objects.bulk_create(Item(task=task, uid=f"loop-bench-{i}", external_id=str(i), position=i,
                                  payload={"text": f"Loop bench sentence {i}."}) for i in range(n_items))
    annotators, tokens = [], []
    for i in range(n_annotators):
        annotator = Annotator.objects.create(user=User.objects.create_user(username=f"loop-bench-{i}"))
        AnnotatorLanguage.objects.create(annotator=annotator, language="eng-Latn")
        annotators.append(annotator)
        tokens.append(Token.objects.create(user=annotator.user).key)
    batch, _ = create_batch(BatchSpec(task=task, name="loop bench", overlap=1), annotators=annotators)
    return batch.pk, tokens


def add_practice(token: str) -> None:
    """One practice item on the study's task, and the study's speed and straight-lining checks on."""
    from annotation.crowd.models import StudyLink
    from tasks_app.models import Item, ItemCheck

    link = StudyLink.objects.select_related("batch").get(token=token)
    item = Item.objects.create(task_id=link.batch.task_id, uid="crowd-bench-practice", external_id="practice",
                               position=10**6, payload={"text": "Practice: a lovely day."})
    ItemCheck.objects.create(item=item, role=ItemCheck.Role.PRACTICE, expected="positive",
                             feedback="A lovely day is positive.")
    StudyLink.objects.filter(pk=link.pk).update(min_seconds=2, straightline_run=4)


def quiet(cpu: Cpu, *, timeout: float = 120.0) -> None:
    """Wait until the server's processes spend under 20 ms of CPU in half a second (every worker has booted and
    nothing is left over from the requests before), or `timeout` seconds."""
    deadline = time.monotonic() + timeout
    before = cpu.read()[0]
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu.read()[0]
        if now - before < 0.02:
            return
        before = now


def run_through(port: int, token: str, name: str, quota: int) -> bool:
    """One participant's whole run as the profile sends it (below), no reading time: the arrival, the
    instructions, the practice item, then `quota` work answers through htmx; whether it reached the code."""
    browser, run = Browser(port), f"/study/{token}/run/"
    tab = browser.hop("GET", f"/study/{token}/?participant={name}").location
    page = browser.hop("GET", tab).body
    browser.hop("POST", run, form_of(page) | {"action": "instructions"})
    page = browser.hop("GET", tab).body
    browser.hop("POST", run, form_of(page) | {"action": "answer", "label": "positive"})
    page = browser.hop("GET", tab).body
    for _ in range(quota):
        page = browser.hop("POST", run, form_of(page) | {"action": "answer", "label": "positive"}, htmx=True).body
    return 'id="completion-code">BENCH<' in page


def warm_up(port: int, token: str, quota: int, loop_batch: int, loop_tokens: list[str]) -> int:
    """WARM_UP_PARTICIPANTS participants through a whole run (no reading time) and as many threads of `quota` loop
    cycles, all at once, so that every web process has served each kind of request once; returns the answers
    stored (for the worker's CPU per answer)."""
    completed = []

    def participate(name: str) -> None:
        completed.append(run_through(port, token, name, quota))

    def loop_cycles(key: str) -> None:
        browser = Browser(port)
        for _ in range(quota):
            hop = browser.hop("GET", f"/api/v1/batches/{loop_batch}/next/", token=key)
            browser.hop("POST", json.loads(hop.body)["answer_url"], token=key, json_body={"value": "positive"})

    threads = [threading.Thread(target=participate, args=(f"warm{i:02d}",)) for i in range(WARM_UP_PARTICIPANTS)]
    threads += [threading.Thread(target=loop_cycles, args=(loop_tokens[i % len(loop_tokens)],))
                for i in range(WARM_UP_PARTICIPANTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if sum(completed) != WARM_UP_PARTICIPANTS:
        raise RuntimeError(f"warm-up: {sum(completed)} of {WARM_UP_PARTICIPANTS} participants reached the code")
    return 2 * WARM_UP_PARTICIPANTS * quota


def form_of(page: str) -> dict[str, str]:
    values = {key: re.search(FIELD.format(key), page) for key in ("csrfmiddlewaretoken", "tab", "item", "shown")}
    return {key: found.group(1) for key, found in values.items() if found}


def profile(args: argparse.Namespace, port: int, token: str, server_pid: int, worker_pid: int, database: str,
            loop_batch: int, loop_tokens: list[str]) -> list[str]:
    server = Cpu(server_pid, database)
    cpu = Profile(server)
    worker = Cpu(worker_pid, "")
    worker_before = worker.read()[0]
    quiet(server)
    web, postgres = server.read()
    warm_answers = warm_up(port, token, args.quota, loop_batch, loop_tokens)
    web_warm, postgres_warm = server.read()
    quiet(server)
    n = args.participants
    people = [Browser(port) for _ in range(n)]
    loop = Browser(port)
    run = f"/study/{token}/run/"
    hops = cpu.measure("arrival: the link (redirect)", [
        lambda b=b, i=i: b.hop("GET", f"/study/{token}/?participant=prof{i:04d}") for i, b in enumerate(people)])
    tabs = [hop.location for hop in hops]
    pages = [hop.body for hop in cpu.measure("arrival: its page (instructions)", [
        lambda b=b, t=t: b.hop("GET", t) for b, t in zip(people, tabs, strict=True)])]
    cpu.measure("instructions: continue (redirect)", [
        lambda b=b, p=p: b.hop("POST", run, form_of(p) | {"action": "instructions"})
        for b, p in zip(people, pages, strict=True)])
    pages = [hop.body for hop in cpu.measure("practice: its page", [
        lambda b=b, t=t: b.hop("GET", t) for b, t in zip(people, tabs, strict=True)])]
    cpu.measure("practice: the answer (feedback page)", [
        lambda b=b, p=p: b.hop("POST", run, form_of(p) | {"action": "answer", "label": "positive"})
        for b, p in zip(people, pages, strict=True)])
    pages = [hop.body for hop in cpu.measure("work: first page", [
        lambda b=b, t=t: b.hop("GET", t) for b, t in zip(people, tabs, strict=True)])]
    loop_done = 0
    for round_ in range(args.quota):
        time.sleep(2.1)  # the speed check's minimum reading time (the answers are real, not flagged)
        label = SUBMIT if round_ < args.quota - 1 else "the last answer and the completion page (one request)"
        pages = [hop.body for hop in cpu.measure(label, [
            lambda b=b, p=p, i=i, r=round_: b.hop("POST", run, form_of(p) | {
                "action": "answer", "label": ["positive", "negative"][(i + r) % 2]}, htmx=True)
            for i, (b, p) in enumerate(zip(people, pages, strict=True))])]
        for _ in range(n):  # as many loop cycles, beside them
            key = loop_tokens[loop_done % len(loop_tokens)]
            hop = cpu.measure("loop: next", [lambda key=key: loop.hop("GET", f"/api/v1/batches/{loop_batch}/next/",
                                                                       token=key)])[0]
            answer_url = json.loads(hop.body)["answer_url"]
            cpu.measure("loop: answer", [lambda key=key, url=answer_url: loop.hop(
                "POST", url, token=key, json_body={"value": "positive"})])
            loop_done += 1
    completed = sum('id="completion-code">BENCH<' in page for page in pages)
    time.sleep(args.profile_settle)  # the debounced report runs the last answers queued
    worker_ms = 1000 * (worker.read()[0] - worker_before)
    answers = n * args.quota + loop_done + warm_answers
    lines = cpu.table({"crowd submit (answer + next page)": [SUBMIT],
                       "loop cycle (next + answer)": ["loop: next", "loop: answer"]})
    crowd_submit = sum(cpu.per_request(SUBMIT)[:2])
    loop_cycle = sum(cpu.per_request(part)[0] + cpu.per_request(part)[1] for part in ("loop: next", "loop: answer"))
    lines.append("")
    lines.append(f"warm-up, not in the table: {WARM_UP_PARTICIPANTS} participants' whole runs and as many threads "
                 f"of {args.quota} loop cycles at once, {1000 * (web_warm - web):.0f} ms web CPU and "
                 f"{1000 * (postgres_warm - postgres):.0f} ms PostgreSQL CPU in all (the workers' first requests)")
    lines.append(f"crowd submit / loop cycle, server CPU (web + PostgreSQL): {crowd_submit / loop_cycle:.1f}x; "
                 f"completed {completed} of {n}")
    lines.append(f"Celery worker: {worker_ms:.0f} ms CPU over the profile ({answers} answers stored, "
                 f"{worker_ms / answers:.1f} ms per answer, the debounced reports included)")
    return lines
