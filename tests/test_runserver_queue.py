"""`manage.py runserver`, the embedded mode's web server (scripts/run), listens with a queue of 1024 connections
(hume/management/commands/runserver.py; issue 26, item 4): Django's keeps 10, and 300 crowd participants
arriving within a minute had connections reset while the one process was busy (docs/crowd.md, "Under load")."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.contrib.staticfiles.management.commands.runserver import Command as StaticfilesRunserver
from django.core.management import get_commands, load_command_class

REPO = Path(__file__).resolve().parent.parent


def test_manage_py_runserver_is_the_long_queue_one_and_still_serves_static_files() -> None:
    assert get_commands()["runserver"] == "hume"
    command = load_command_class("hume", "runserver")
    assert isinstance(command, StaticfilesRunserver)
    assert command.server_cls.request_queue_size == 1024


def test_the_running_server_s_socket_listens_with_that_queue(tmp_path) -> None:
    # a real `manage.py runserver` on a port of its own; `ss` shows a listening socket's queue as its Send-Q
    port = 8000 + os.getpid() % 1000 + 1000
    env = {**os.environ, "DEBUG": "true", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload",
                               "--skip-checks"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        listening = ""
        for _ in range(150):
            listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
            if listening.strip():
                break
            time.sleep(0.2)
        assert listening.split()[:3] == ["LISTEN", "0", "1024"], listening
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
