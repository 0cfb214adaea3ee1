"""A redis-server of the test's own, on a free loopback port, that the test may stop and start again.

The shared Redis other tests use is never touched: a test that needs Redis to go away points a setting at this
one and stops it. `stop()` kills the process (as a crashed or unplugged Redis would vanish) and `start()` brings
it back on the same port."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_server_binary() -> str:
    beside_python = Path(sys.executable).with_name("redis-server")
    found = str(beside_python) if beside_python.exists() else shutil.which("redis-server")
    assert found, "redis-server is needed for the Redis-down tests"
    return found


class ThrowawayRedis:
    """`data_dir`: keep the data there (append-only file, written through on every command), so a restart on
    the same folder finds the queues as they were, as a production Redis with persistence does."""

    def __init__(self, data_dir: Path | None = None) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = ["--appendonly", "no"] if self.data_dir is None else [
            "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.data_dir)]
        self.process = subprocess.Popen(
            [redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None
