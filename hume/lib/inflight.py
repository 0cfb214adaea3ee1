"""Keeping a run's requests in flight: one asyncio event loop, in its own thread, running up to `size` requests.

Why one event loop and not a thread per request: at 256 in flight on a 2-core machine, 256 request threads
competed for the GIL with each other and with the executor's loop, whose stores took ~100 ms a chunk instead of
~40 ms, and the run reached 0.42× of the bound. Here one thread carries every request, and the executor's loop
(which claims and stores: database round trips, its own connection, its own transaction in tests) runs beside
it. The loop queues up to `lookahead` claimed jobs beyond what is in flight; a request that finishes starts the
next job at once, whatever the executor's loop is doing. The requests never touch the database.
"""
from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Generic, TypeVar

Key = TypeVar("Key")


class RequestPool(Generic[Key]):
    """Up to `size` coroutines `work(job)` at a time for queued jobs; `outstanding` counts jobs queued or running.

    `submit`, `take` and `withdraw` are called from one thread (the executor's); `cleanup` runs on the event
    loop when the pool closes (closing idle connections). Once a result for which `halts(result)` is true comes
    back (an endpoint that refuses the key), no queued job starts: they wait for `withdraw`, not one more
    request is sent."""

    def __init__(self, size: int, work: Callable[[Any], Awaitable[Any]], name: str,
                 cleanup: Callable[[], None] | None = None, halts: Callable[[Any], bool] | None = None) -> None:
        self.size, self.work, self.cleanup, self.halts = size, work, cleanup, halts
        self._halted = False  # a result `halts` said yes to: no queued job starts any more (the loop's own)
        self.results: queue.SimpleQueue[tuple[Key, Any]] = queue.SimpleQueue()
        self.outstanding = 0
        self._waiting: deque[tuple[Key, Any]] = deque()  # shared by both threads, under `_lock`
        self._lock = threading.Lock()
        self._running: set[asyncio.Task[Any]] = set()  # the loop's own
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)

    def __enter__(self) -> RequestPool[Key]:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.withdraw()
        asyncio.run_coroutine_threadsafe(self._finish(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _finish(self) -> None:
        await asyncio.gather(*self._running, return_exceptions=True)  # as threads were joined: let them end
        if self.cleanup is not None:
            self.cleanup()
        await self._loop.shutdown_default_executor()  # the threads that resolved host names

    def submit(self, key: Key, job: Any) -> None:
        with self._lock:
            self._waiting.append((key, job))
        self.outstanding += 1
        self._loop.call_soon_threadsafe(self._fill)

    def _fill(self) -> None:
        while len(self._running) < self.size and not self._halted:
            with self._lock:
                if not self._waiting:
                    return
                key, job = self._waiting.popleft()
            task = self._loop.create_task(self.work(job))
            self._running.add(task)
            task.add_done_callback(partial(self._done, key))

    def _done(self, key: Key, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled():
            result = task.result()  # `work` reports failures as results: it must not raise
            self._halted = self._halted or (self.halts is not None and self.halts(result))
            self.results.put((key, result))
        self._fill()

    def take(self, timeout: float, gather: float = 0.0) -> list[tuple[Key, Any]]:
        """The results available, waiting up to `timeout` for the first one and then up to `gather` seconds for
        more while jobs are outstanding (fewer, larger chunks for the caller to store)."""
        try:
            done = [self.results.get(timeout=timeout)]
        except queue.Empty:
            return []
        until = time.monotonic() + gather
        while True:
            try:
                done.append(self.results.get_nowait())
                continue
            except queue.Empty:
                pass
            left = until - time.monotonic()
            if left <= 0 or len(done) >= self.outstanding:
                break
            try:
                done.append(self.results.get(timeout=left))
            except queue.Empty:
                break
        self.outstanding -= len(done)
        return done

    def withdraw(self) -> list[Key]:
        """Take back the jobs not started yet (a pause, a fatal error, the end of a slice): their keys."""
        with self._lock:
            taken = [key for key, _ in self._waiting]
            self._waiting.clear()
        self.outstanding -= len(taken)
        return taken
