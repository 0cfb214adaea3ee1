"""Pointwise judging throughput against a local chat-completions server that answers in 200 ms.

Why: the study ran each judge at up to 1,024 calls in flight; the app's LLM runs keep `max_concurrency`
requests in flight (at most 1,024, the field's validator). With latency L and C in flight, the bound is
C / L requests per second; this prints the rate reached over N pool-style pairs (one query id, one document,
the study's prompt and `{"reasoning", "score"}` reply) and checks every answer is stored exactly once.
Goal: ≥ 0.8× the bound. Uses the configured database (DATABASE_URL); its rows are deleted afterwards.

The endpoint runs in its own process on one asyncio event loop, as inference servers do (vLLM and
text-generation servers answer from an event loop): the `threads` server (http.server, a thread per
connection) was itself the ceiling at 256 in flight on a 2-core machine: the runs' event-loop client with no
database reached 0.66-0.71× against it and 0.85-0.86× against the event-loop server (load average ~5).

Measured 2026-11-25 on 2 cores, PostgreSQL 15 on the same machine, load average 0.8-1.6, 15,000 pairs at 256
in flight: 0.88×, 0.86×, 0.88× of the bound (1,100-1,124 requests/s; bare threads 0.91-0.92×); 5,000 pairs at
64: 0.96×; 30,000 at 1,024: 1,485/s = 0.29× (the machine's ceiling: bare threads 0.22×). Before this session's
changes (h11, model instances for items and claims, half a queued job per slot): 0.56-0.64× at 256.
Runs on the job layer (2026-11-26, the run's lease renewed by the loop, every store fenced by it in the same
statement), 4,000 pairs at 64, alternated with the code before on the same machine, load average 6-12: 0.92×,
0.89× against 0.89×, 0.89× before (the same); with the store fenced by a separate transaction (`Lease.fenced()`,
three round trips instead of one) it had been 0.90×, 0.89× against 0.95×, 0.94×.

Run: DATABASE_URL=... ENDPOINT_ALLOWED_NETWORKS=127.0.0.0/8 .venv/bin/python bench/bench_pointwise_judging.py
     [pairs] [in_flight] [asyncio|threads]
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
os.environ.setdefault("LLM_SLICE_SECONDS", "600")

import django

django.setup()

from annotation.llm.models import LLMRequest  # noqa: E402
from annotation.llm.run_control import create_llm_annotator, create_run  # noqa: E402
from annotation.llm.run_executor import execute_run  # noqa: E402
from annotation.models import Annotation  # noqa: E402
from hume.lib.http_client import ChatClient, RateLimiter  # noqa: E402
from tasks_app.core.kinds import content_digest  # noqa: E402
from tasks_app.models import Item, Task  # noqa: E402

LATENCY = 0.2
NAME = "bench: pointwise judging"


CONTENT = json.dumps({"reasoning": "Shares the topic.", "score": 6.5})
REPLY = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": CONTENT},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 300, "completion_tokens": 40}}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as inference servers (vLLM, llama.cpp, OpenAI) answer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(LATENCY)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)


def serve_threads(port: multiprocessing.Queue) -> None:
    """The endpoint in its own process, as a real one is: its threads do not compete with the run's for the GIL."""
    ThreadingHTTPServer.request_queue_size = 1024
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port.put(server.server_address[1])
    server.serve_forever()


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 keep-alive by hand: read a request (head, then Content-Length bytes), answer LATENCY later."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(REPLY)
    try:
        while True:
            request = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in request.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            await asyncio.sleep(LATENCY)
            writer.write(head + REPLY)
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


def serve_asyncio(port: multiprocessing.Queue) -> None:
    """The endpoint in its own process on one event loop."""
    async def main() -> None:
        server = await asyncio.start_server(answer, "127.0.0.1", 0, backlog=1024)
        port.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()
    asyncio.run(main())


def bare_rate(base_url: str, pairs: int, in_flight: int) -> float:
    """The same requests from `in_flight` threads with no database at all: what this machine's HTTP allows."""
    client = ChatClient(base_url, "sk-bench", timeout=30, max_retries=0, limiter=RateLimiter(1_000_000))
    body = {"model": "bench", "messages": [{"role": "user", "content": "query 0 / document 0"}]}
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        list(pool.map(lambda _: client.complete(body), range(pairs)))
    return pairs / (time.perf_counter() - start)


def main(pairs: int, in_flight: int, kind: str) -> None:
    ports: multiprocessing.Queue = multiprocessing.Queue()
    serve = {"asyncio": serve_asyncio, "threads": serve_threads}[kind]
    server = multiprocessing.Process(target=serve, args=(ports,), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    task = Task.objects.create(name=NAME, kind="graded_relevance", language="eng-Latn", scale_min=0,
                               scale_max=10, scale_step=0.1)
    Item.objects.bulk_create([Item(task=task, uid=content_digest(NAME, i), external_id=f"p{i}", position=i,
                                   payload={"query": f"query {i // 50}", "query_id": f"q{i // 50}",
                                            "documents": [{"id": f"d{i}", "text": f"document {i}"}]})
                              for i in range(pairs)])
    os.environ["BENCH_JUDGE_API_KEY"] = "sk-bench"
    try:
        judge = create_llm_annotator("bench-judge", base_url=f"http://127.0.0.1:{port}/v1",
                                     model="bench", api_key_env="BENCH_JUDGE_API_KEY", max_concurrency=in_flight,
                                     requests_per_minute=1_000_000, timeout_seconds=30, max_retries=0)
    except Exception:
        task.delete()
        raise
    try:
        run = create_run(judge.annotator, task=task)
        start = time.perf_counter()
        while execute_run(run.pk) == "continue":
            pass
        seconds = time.perf_counter() - start
        stored = Annotation.objects.filter(annotator=judge.annotator).count()
        requests = LLMRequest.objects.filter(annotator=judge.annotator).count()
        bound = in_flight / LATENCY
        bare = bare_rate(f"http://127.0.0.1:{port}/v1", pairs, in_flight)
        print(f"{kind} server, {pairs:,} pairs, {in_flight} in flight, {LATENCY * 1000:.0f} ms per answer: "
              f"{seconds:.1f} s, "
              f"{pairs / seconds:.0f} requests/s against a bound of {bound:.0f}/s = {pairs / seconds / bound:.2f}× "
              f"(goal ≥ 0.8×); bare threads with no database on this machine: {bare:.0f}/s = {bare / bound:.2f}× "
              f"the bound, the run {pairs / seconds / bare:.2f}× of it; answers stored {stored}, "
              f"request rows {requests}")
        assert stored == requests == pairs
    finally:
        judge.annotator.user.delete()
        task.delete()
        server.terminate()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 64,
         sys.argv[3] if len(sys.argv) > 3 else "asyncio")
