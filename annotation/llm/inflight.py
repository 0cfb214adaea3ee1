"""Keeping a run's requests in flight: worker threads that take jobs from a queue and put results on another.

Why not `ThreadPoolExecutor.submit` from the executor's loop: the loop also claims and stores (database round
trips), and every request that finished while it was storing waited for the next `submit`, so at 256 in flight
the endpoint saw a fraction of them. Here the loop queues up to `lookahead` claimed jobs beyond what is in
flight; a worker that finishes takes the next job at once, whatever the loop is doing. The workers never touch
the database: the loop (its own connection, its own transaction in tests) claims and stores.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Key = TypeVar("Key")
_STOP = object()


class RequestPool(Generic[Key]):
    """`size` threads applying `work` to queued jobs; `outstanding` counts jobs queued or in a worker's hands."""

    def __init__(self, size: int, work: Callable[[Any], Any], name: str) -> None:
        self.size, self.work, self.name = size, work, name
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[tuple[Key, Any]] = queue.SimpleQueue()
        self.outstanding = 0
        self.threads: list[threading.Thread] = []

    def __enter__(self) -> RequestPool[Key]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.withdraw()
        for _ in self.threads:
            self.jobs.put(_STOP)
        for thread in self.threads:
            thread.join()

    def submit(self, key: Key, job: Any) -> None:
        self.jobs.put((key, job))
        self.outstanding += 1
        if len(self.threads) < min(self.size, self.outstanding):  # threads start as the work needs them
            thread = threading.Thread(target=self._serve, name=f"{self.name}-{len(self.threads)}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def _serve(self) -> None:
        while (job := self.jobs.get()) is not _STOP:
            key, argument = job
            self.results.put((key, self.work(argument)))

    def take(self, timeout: float) -> list[tuple[Key, Any]]:
        """Every result available now, waiting up to `timeout` for the first one."""
        try:
            done = [self.results.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                done.append(self.results.get_nowait())
            except queue.Empty:
                break
        self.outstanding -= len(done)
        return done

    def withdraw(self) -> list[Key]:
        """Take back the jobs no worker has started (a pause, a fatal error): their keys."""
        taken = []
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            if job is _STOP:
                self.jobs.put(job)
                break
            taken.append(job[0])
        self.outstanding -= len(taken)
        return taken
