"""The library layer (docs/architecture.md, "The library layer"): infrastructure every app may use, which knows
no app, as the job layer beside it (`hume/jobs/`) does.

- The HTTP client stack of LLM annotators and embedding models: `http_client` (`ChatClient`, retries, pacing,
  the key kept out of every text), `http_transport` (a kept-alive connection per thread), `aio_transport`
  (one asyncio event loop, httptools), `inflight` (a run's requests in flight on that loop), `endpoint_policy`
  (where the server may send requests at all).

Nothing here imports an app (`tests/test_import_direction.py`): what varies by app is handed in (a model
class, a budget object), never looked up.
"""
