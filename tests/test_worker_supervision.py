"""A worker that dies is started again by scripts/supervise, which scripts/run starts its worker under
(issue 23, item 1: a worker that died on a broker loss left nothing running until someone restarted it).

A real Celery worker runs under the script; the test kills it outright (SIGKILL, as a crash would end it) and
waits for a new worker process to answer a ping; stopping the script stops its worker."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

from django.conf import settings

from hume.lib.celery_app import app
from tests.conftest import REPO

RUN = REPO / "scripts" / "run"


def answers(name: str) -> bool:
    return bool(app.control.ping(destination=[name], timeout=0.5))


def wait_until(check, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout:g}s")


def child_of(pid: int) -> int | None:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return int(found[0]) if found else None


def test_a_killed_worker_is_started_again_and_stopping_the_script_stops_it() -> None:
    name = f"supervised-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"
    env = {**os.environ, "REDIS_URL": settings.REDIS_URL, "SUPERVISE_DELAY": "0.5"}
    command = [str(REPO / "scripts" / "supervise"), sys.executable, "-m", "celery", "-A", "hume", "worker", "-n",
               name, "--concurrency=1", "--pool=solo", "--without-gossip", "--without-mingle",
               "--without-heartbeat", "--loglevel=WARNING"]
    supervisor = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True, stderr=subprocess.PIPE,
                                  text=True)
    try:
        wait_until(lambda: answers(name))
        first = child_of(supervisor.pid)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: (child_of(supervisor.pid) or first) != first and answers(name))
        second = child_of(supervisor.pid)
        assert second != first and supervisor.poll() is None
    finally:
        supervisor.terminate()
        _, errors = supervisor.communicate(timeout=30)
    assert supervisor.returncode == 0
    assert "exited with status 137; starting it again in 0.5s" in errors  # 128 + SIGKILL
    assert not answers(name)
    assert subprocess.run(["ps", "-p", str(second)], capture_output=True).returncode != 0  # the worker is gone


def test_the_run_command_starts_its_worker_under_the_supervisor() -> None:
    workers = [line for line in RUN.read_text(encoding="utf-8").splitlines()
               if "celery -A hume worker" in line and not line.lstrip().startswith("#")]
    assert len(workers) == 1 and workers[0].startswith('scripts/supervise "$PY" -m celery -A hume worker')
