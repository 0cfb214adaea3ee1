"""Shared fixtures: the named people every test reuses, and a real Celery worker process.

alice: annotator (eng-Latn native, dan-Latn fluent) · bob: annotator (ara-Arab native) ·
carol: admin · dave: researcher.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connection

from annotation.core.annotators import create_annotator
from annotation.models import Annotator
from hume.roles import ADMIN, RESEARCHER, ensure_role_groups
from tests import table_emptying
from tests.ci_no_skips import (  # noqa: F401 (the hooks are used by pytest)
    pytest_make_collect_report,
    pytest_runtest_makereport,
    running_in_ci,
)

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "correct-horse-battery"


def make_user(username: str, role: str) -> User:
    ensure_role_groups()
    user = User.objects.create_user(username=username, password=PASSWORD)
    user.groups.add(Group.objects.get(name=role))
    return user


def make_annotator(username: str, languages: dict[str, str], agent: str = "human") -> Annotator:
    return create_annotator(username, agent=agent, password=PASSWORD, languages=languages)


@pytest.fixture
def alice(db: None) -> Annotator:
    return make_annotator("alice", {"eng-Latn": "native", "dan-Latn": "fluent"})


@pytest.fixture
def bob(db: None) -> Annotator:
    return make_annotator("bob", {"ara-Arab": "native"})


@pytest.fixture
def carol(db: None) -> User:
    return make_user("carol", ADMIN)


@pytest.fixture
def dave(db: None) -> User:
    return make_user("dave", RESEARCHER)


def database_url_for_subprocess() -> str:
    """The URL of the database the tests use right now (the test database), for worker processes."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        name = str(db["NAME"])
        if "memory" in name or not name:
            skip_unless_ci("a worker process needs PostgreSQL or a file database (set DATABASE_URL)")
        return f"sqlite:///{name}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def require_postgres() -> None:
    if connection.vendor != "postgresql":
        skip_unless_ci("needs PostgreSQL: run the suite through scripts/test (it sets DATABASE_URL)")


def skip_unless_ci(reason: str) -> None:
    """Skip a test whose service is missing on a developer's machine; under CI (CI=true), where scripts/test
    installs every service, fail instead, so a test can never pass there by not running (any other skip
    fails there too: tests/ci_no_skips.py)."""
    if running_in_ci():
        pytest.fail(f"{reason} (CI must run every test)")
    pytest.skip(reason)


@pytest.fixture
def start_worker(transactional_db: None) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start real `celery worker` processes on the test database; they are stopped after the test.

    `report_pause`: the worker's report runs pause that many seconds after reading their answers
    (tests/slow_report_worker_settings.py), so a test can watch or kill a run in progress."""
    started: list[subprocess.Popen] = []

    def start(*extra_args: str, concurrency: int = 1, report_pause: float | None = None) -> subprocess.Popen:
        env = {**os.environ, "DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": settings.REDIS_URL}
        if report_pause is not None:
            env |= {"DJANGO_SETTINGS_MODULE": "tests.slow_report_worker_settings",
                    "HUME_TEST_REPORT_PAUSE": str(report_pause)}
        cmd = [sys.executable, "-m", "celery", "-A", "hume", "worker", "-B", "--loglevel=WARNING",  # -B: as scripts/run
               f"--concurrency={concurrency}", "--without-gossip", "--without-mingle", "--without-heartbeat",
               *extra_args]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True)
        started.append(proc)
        wait_for_worker()
        return proc

    yield start
    for proc in started:
        kill_process_group(proc)


def kill_process_group(proc: subprocess.Popen) -> None:
    """End a worker whose test is over at once: KILL its whole session (its pool and beat too). Its warm shutdown
    (TERM) took 5 s or more even when idle, for every worker of every test; what a test proves is asserted before
    this, and a test about shutting down stops its worker itself (`stop_process`)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def stop_process(proc: subprocess.Popen, timeout: float = 30) -> None:
    """End a worker (or server) this test started: TERM, then KILL of its whole session after `timeout` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)


def wait_for_worker(timeout: float = 60) -> None:
    from hume.lib.celery_app import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if app.control.ping(timeout=0.5, limit=1):  # back at the first answer, not after the 0.5 s
            return
    raise RuntimeError("the Celery worker did not answer a ping within a minute")


@pytest.fixture(autouse=True)
def purge_broker_queue_between_worker_tests(request: pytest.FixtureRequest) -> None:
    """Messages left by one test must not be run by the next test's worker."""
    if "start_worker" in request.fixturenames:
        from hume.lib.celery_app import app

        app.control.purge()


LOCAL_NETWORKS = "127.0.0.0/8,::1/128"


@pytest.fixture
def local_llm_endpoints(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Allow the local fake LLM servers (tests/llm_server.py) past the endpoint policy, in this process and in
    the worker processes started after it; by default loopback endpoints are refused (SSRF)."""
    settings.ENDPOINT_ALLOWED_NETWORKS = LOCAL_NETWORKS.split(",")
    monkeypatch.setenv("ENDPOINT_ALLOWED_NETWORKS", LOCAL_NETWORKS)


@pytest.fixture(scope="module")
def hume_results(django_db_setup: None, django_db_blocker: pytest.FixtureRequest) -> Iterator[None]:
    """Import the public HUME results once for the module through the real command; removed afterwards."""
    from io import StringIO

    from django.core.management import call_command

    from agreement.results.models import ResultModel
    from tests.hume_paper import RESULTS

    with django_db_blocker.unblock():
        call_command("import_results", str(RESULTS), stdout=StringIO())
    yield
    with django_db_blocker.unblock():
        ResultModel.objects.all().delete()


def pytest_configure(config: pytest.Config) -> None:
    """End transactional tests on PostgreSQL by DELETEing the rows they wrote, not by a TRUNCATE of every table
    (tests/table_emptying.py: the same state, about a second less per test)."""
    table_emptying.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    table_emptying.uninstall()
