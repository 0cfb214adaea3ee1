#!/usr/bin/env python
"""The annotation loop side by side (issue 26, item 4): this app's cycles/s ÷ Label Studio's, at 10 and 40
concurrent clients, on the same PostgreSQL, with the same client code, in one run; or this app alone in two
checkouts (before and after a change), with the ratio of the first to the second.

A cycle is what an annotator's client does for one item, through each app's HTTP API as its users drive it:

- this app: GET /api/v1/batches/<id>/next/, then POST the answer to the `answer_url` it returned
  (docs/batches.md);
- Label Studio: GET /api/projects/<id>/next/ (the next task by the project's sampling and overlap, as its
  "Label all tasks" button), then POST /api/tasks/<id>/annotations/ with a choices result.

Both get the same work: one classification task (two labels) of --items items per run, overlap k = 2 (Label
Studio: maximum_annotations = 2 on every task), separate annotators per run, each with an API token, and the
same minimal HTTP client (bench/bench_assignment.py's `Client`). Both are served the same way, gunicorn with
--workers sync workers, DEBUG off, and both databases sit on the same PostgreSQL server; each starts from a
database of its own that the bench recreates, migrates and seeds. The servers are started and stopped by the
bench; only one is measured at a time (the others sit idle).

Label Studio is never a requirement of this app: install it in a virtual environment of its own, outside the
repository, and name its Python (its gunicorn is used; Label Studio's own Docker image serves it with uWSGI,
`label-studio start` with Django's development server):

    python3 -m venv ../ls-venv && ../ls-venv/bin/pip install label-studio gunicorn
    python bench/bench_loop_vs_label_studio.py --label-studio-python ../ls-venv/bin/python

    # this app before and after a change, in one run (two checkouts; the ratio is the first ÷ the second)
    python bench/bench_loop_vs_label_studio.py --app-dir ../hume-after --app-dir ../hume-before

    # another way to start Label Studio: a command with {python}, {port}, {workers} and {label_studio} (its
    # package folder), run there with the bench's environment (its database); it must serve 127.0.0.1:{port}.
    # The default, the one measured in docs/crowd.md:
    python bench/bench_loop_vs_label_studio.py --label-studio-python ../ls-venv/bin/python \
        --label-studio-cmd "{python} -m gunicorn core.wsgi:application --workers {workers} --bind 127.0.0.1:{port}"

BENCH_DATABASE_URL names the PostgreSQL server and the database prefix (default
postgres://hume:hume@127.0.0.1:5432/hume_loop_bench): this app's checkouts get <prefix>_1, <prefix>_2, …,
Label Studio <prefix>_label_studio. REDIS_URL is passed to this app's servers (reports are queued there).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_assignment import HOST, Client, Tally, percentile, recreate_database, request, stop  # noqa: E402

DEFAULT_URL = "postgres://hume:hume@127.0.0.1:5432/hume_loop_bench"
LABEL_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="sentiment" toName="text" choice="single">
    <Choice value="positive"/>
    <Choice value="negative"/>
  </Choices>
</View>"""
ANSWER = [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": ["positive"]}}]

# Run inside an app checkout (its own code, its own database): one task, and per run a batch with its own
# annotators and tokens; prints [[batch id, [token, …]], …].
SEED_APP = """
import json, sys
import django
django.setup()
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.authtoken.models import Token
try:
    from annotation.core.batches import BatchSpec, create_batch
except ImportError:  # a checkout from before the batches module moved into annotation/core/ (issue 38)
    from annotation.batches import BatchSpec, create_batch
from annotation.models import Annotator, AnnotatorLanguage
from tasks_app.models import Item, Task
runs, n_items, overlap = json.loads(sys.argv[1])
task = Task.objects.create(name="LoopBench", kind="classification", language="eng-Latn",
                           labels=["positive", "negative"])
Item.objects.bulk_create(Item(task=task, uid=f"loop-{i}", external_id=str(i), position=i,
                              payload={"text": f"Loop bench sentence {i}, neither good nor bad."})
                         for i in range(n_items))
out = []
for run, concurrency in enumerate(runs):
    annotators, tokens = [], []
    for i in range(concurrency):
        user = User.objects.create_user(username=f"loop{run}-{i}")
        annotator = Annotator.objects.create(user=user)
        AnnotatorLanguage.objects.create(annotator=annotator, language="eng-Latn")
        annotators.append(annotator)
        tokens.append(Token.objects.create(user=user).key)
    batch, _ = create_batch(BatchSpec(task=task, name=f"loop run {run}", overlap=overlap), annotators=annotators)
    out.append([batch.pk, tokens])
with connection.cursor() as cursor:
    cursor.execute("VACUUM ANALYZE")
print(json.dumps(out))
"""

# Run with Label Studio's Python in its package folder: an organisation, and per run a project (overlap k on
# every task) with its own annotators (legacy API tokens, as its "Account & Settings" page shows them).
SEED_LABEL_STUDIO = """
import json, sys
import django
django.setup()
from django.db import connection
from organizations.models import Organization
from projects.models import Project
from tasks.models import Task
from users.models import User
runs, n_items, overlap, label_config = json.loads(sys.argv[1])
owner = User.objects.create_user(email="owner@loop-bench.example", password=None)
organization = Organization.create_organization(created_by=owner, title="loop bench", legacy_api_tokens_enabled=True)
owner.active_organization = organization
owner.save(update_fields=["active_organization"])
out = []
for run, concurrency in enumerate(runs):
    project = Project.objects.create(title=f"loop run {run}", label_config=label_config, created_by=owner,
                                     organization=organization, maximum_annotations=overlap,
                                     overlap_cohort_percentage=100, show_skip_button=True)
    Task.objects.bulk_create(Task(project=project, overlap=overlap,
                                  data={"text": f"Loop bench sentence {i}, neither good nor bad."})
                             for i in range(n_items))
    tokens = []
    for i in range(concurrency):
        user = User.objects.create_user(email=f"loop{run}-{i}@loop-bench.example", password=None)
        organization.add_user(user)
        user.active_organization = organization
        user.save(update_fields=["active_organization"])
        tokens.append(user.auth_token.key)
    out.append([project.pk, tokens])
with connection.cursor() as cursor:
    cursor.execute("VACUUM ANALYZE")
print(json.dumps(out))
"""


@dataclass
class System:
    """One server under test: how to set up its database, start it, and drive one cycle."""

    label: str
    port: int
    env: dict[str, str]
    runs: list = None  # [(batch or project id, [token, …]), …] per concurrency
    server: subprocess.Popen | None = None


def database_url(prefix: str, suffix: str) -> str:
    parts = urlparse(prefix)
    return parts._replace(path=f"{parts.path}_{suffix}").geturl()


def app_env(url: str) -> dict[str, str]:
    """This app as production runs it (bench/bench_assignment.py's server)."""
    return {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "hume.settings", "DEBUG": "false",
            "SECRET_KEY": secrets.token_urlsafe(64), "ALLOWED_HOSTS": HOST, "SECURE_SSL_REDIRECT": "false",
            "CONN_MAX_AGE": "600", "LOG_LEVEL": "ERROR"}


def label_studio_env(url: str, data_dir: str) -> dict[str, str]:
    parts = urlparse(url)
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "core.settings.label_studio", "DJANGO_DB": "default",
            "POSTGRE_NAME": parts.path.lstrip("/"), "POSTGRE_USER": parts.username or "",
            "POSTGRE_PASSWORD": parts.password or "", "POSTGRE_HOST": parts.hostname or HOST,
            "POSTGRE_PORT": str(parts.port or 5432), "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_BASE_DATA_DIR": data_dir, "DEBUG": "false", "LOG_LEVEL": "ERROR",
            "SECRET_KEY": secrets.token_urlsafe(64), "COLLECT_ANALYTICS": "false", "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": ""}


def run_json(cmd: list[str], cwd: Path, env: dict[str, str]) -> list:
    done = subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def wait_until_up(system: System, path: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if system.server.poll() is not None:
            raise RuntimeError(f"{system.label}: the server exited with {system.server.returncode}")
        try:
            if request(system.port, "GET", path, None, None)[0] < 500:
                return
        except OSError:
            pass
        time.sleep(0.5)
    stop(system.server)
    raise RuntimeError(f"{system.label}: the server did not answer {path} within {timeout:.0f} s")


def prepare_app(app_dir: Path, label: str, url: str, port: int, args: argparse.Namespace) -> System:
    system = System(f"HUME {label}", port, app_env(url))
    recreate_database(url)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=app_dir, env=system.env,
                   check=True)
    system.runs = run_json([sys.executable, "-c", SEED_APP, json.dumps([args.concurrency, args.items, args.overlap])],
                           app_dir, system.env | {"DEBUG": "true"})
    system.server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "hume.wsgi:application", "--workers", str(args.workers), "--bind",
         f"{HOST}:{port}", "--backlog", "2048", "--log-level", "warning"],
        cwd=app_dir, env=system.env, start_new_session=True)
    wait_until_up(system, "/healthz/")
    return system


def prepare_label_studio(python: str, command: str, url: str, port: int, data_dir: str,
                         args: argparse.Namespace) -> System:
    system = System("Label Studio", port, label_studio_env(url, data_dir))
    package = Path(subprocess.run([python, "-c", "import label_studio, os; print(os.path.dirname("
                                                 "label_studio.__file__))"], check=True, capture_output=True,
                                  text=True).stdout.strip())
    version = subprocess.run([python, "-c", "import label_studio; print(label_studio.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    system.label = f"Label Studio {version}"
    recreate_database(url)
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=package, env=system.env, check=True,
                   capture_output=True)
    system.runs = run_json([python, "-c", SEED_LABEL_STUDIO,
                            json.dumps([args.concurrency, args.items, args.overlap, LABEL_CONFIG])], package,
                           system.env)
    cmd = command.format(python=shlex.quote(python), port=port, workers=args.workers,
                         label_studio=shlex.quote(str(package)))
    with open(Path(data_dir) / "server.log", "ab") as log:  # Label Studio talks a lot; the log stays there
        system.server = subprocess.Popen(cmd, shell=True, cwd=package, env=system.env, start_new_session=True,
                                         stdout=log, stderr=subprocess.STDOUT)
    wait_until_up(system, "/health/")
    return system


def app_cycle(client: Client, run_id: int, token: str) -> bool | None:
    """One next + answer of this app; True when answered, None when nothing is left, False on an error."""
    status, body = client.request("GET", f"/api/v1/batches/{run_id}/next/", token, None)
    if status == 204:
        return None
    if status != 200:
        return False
    status, _ = client.request("POST", json.loads(body)["answer_url"], token, {"value": "positive"})
    return status == 201


def label_studio_cycle(client: Client, run_id: int, token: str) -> bool | None:
    """One next + annotation of Label Studio, as its labelling stream does."""
    status, body = client.request("GET", f"/api/projects/{run_id}/next/", token, None)
    if status == 404:  # no more tasks for this annotator
        return None
    if status != 200:
        return False
    task = json.loads(body)
    status, _ = client.request("POST", f"/api/tasks/{task['id']}/annotations/?project={run_id}", token,
                               {"result": ANSWER, "lead_time": 1.0, "project": run_id})
    return status == 201


def measure(system: System, cycle, run_id: int, tokens: list[str], seconds: float) -> tuple[Tally, float]:
    tally = Tally()
    until = time.monotonic() + seconds

    def annotator(token: str) -> None:
        client = Client(system.port)
        try:
            while time.monotonic() < until:
                started = time.perf_counter()
                try:
                    answered = cycle(client, run_id, token)
                except (OSError, ValueError, KeyError) as error:
                    answered = False
                    with tally.lock:
                        tally.errors.append(repr(error))
                with tally.lock:
                    if answered:
                        tally.latencies.append(time.perf_counter() - started)
                    else:
                        tally.statuses["none left" if answered is None else "error"] += 1
                if answered is None:
                    return
        finally:
            client.close()

    started = time.monotonic()
    threads = [threading.Thread(target=annotator, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally, time.monotonic() - started


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", action="append", type=Path, default=[],
                        help="a checkout of this app (repeat for two; default: this one)")
    parser.add_argument("--label-studio-python", help="the Python of a virtual environment with label-studio "
                                                      "(and gunicorn, for the default command)")
    parser.add_argument("--label-studio-cmd", default="{python} -m gunicorn core.wsgi:application --workers "
                                                      "{workers} --bind 127.0.0.1:{port} --log-level warning",
                        help="how to start Label Studio (run in its package folder)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 40])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--items", type=int, default=4000, help="items (tasks) per run")
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers of every server")
    parser.add_argument("--port", type=int, default=8741, help="the first of the ports the servers take")
    args = parser.parse_args()
    app_dirs = [path.resolve() for path in args.app_dir] or [REPO]
    if not args.label_studio_python and len(app_dirs) < 2:
        parser.error("name --label-studio-python, or two --app-dir to compare")
    prefix = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    systems: list[tuple[System, object]] = []
    data_dir = tempfile.mkdtemp(prefix="loop-bench-label-studio-")
    try:
        for n, app_dir in enumerate(app_dirs, start=1):
            label = f"#{n} {app_dir.name}" if len(app_dirs) > 1 else "(this app)"
            systems.append((prepare_app(app_dir, label, database_url(prefix, str(n)), args.port + n, args),
                            app_cycle))
        if args.label_studio_python:
            systems.append((prepare_label_studio(args.label_studio_python, args.label_studio_cmd,
                                                 database_url(prefix, "label_studio"), args.port, data_dir, args),
                            label_studio_cycle))
        print(f"gunicorn {args.workers} sync workers each, PostgreSQL, k = {args.overlap}, {args.items} items per run, "
              f"{args.seconds:.0f} s per run, {os.cpu_count()} CPUs ({load()} before)")
        rates: dict[tuple[str, int], float] = {}
        for index, concurrency in enumerate(args.concurrency):
            for system, cycle in systems:
                run_id, tokens = system.runs[index]
                warm = Client(system.port)
                cycle(warm, run_id, tokens[0])  # a first request warms a worker's connection and code paths
                warm.close()
                tally, elapsed = measure(system, cycle, run_id, tokens, args.seconds)
                ms = [1000 * x for x in tally.latencies]
                rates[system.label, concurrency] = len(ms) / elapsed
                spread = (f"p50 {percentile(ms, 50):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms" if ms else "no cycle")
                others = f"; other outcomes {dict(tally.statuses)}" if tally.statuses else ""
                print(f"{concurrency:3d} clients, {system.label:24s} {rates[system.label, concurrency]:6.1f} cycles/s  "
                      f"{spread}  ({len(ms)} cycles, {load()}{others})")
                for error in tally.errors[:3]:
                    print(f"     error: {error}")
        first = systems[0][0].label
        for concurrency in args.concurrency:
            for system, _ in systems[1:]:
                other = rates[system.label, concurrency]
                ratio = f"{rates[first, concurrency] / other:.2f}" if other else "n/a (no cycle)"
                print(f"ratio at {concurrency} clients: {first} ÷ {system.label} = {ratio}")
    except BaseException:
        print(f"Label Studio's server log, if it started: {data_dir}/server.log", file=sys.stderr)
        raise
    else:
        shutil.rmtree(data_dir, ignore_errors=True)
    finally:
        for system, _ in systems:
            if system.server is not None:
                stop(system.server)


if __name__ == "__main__":
    main()
