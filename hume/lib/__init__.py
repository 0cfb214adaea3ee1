"""The library layer (docs/architecture.md, "The library layer"): infrastructure every app may use, which knows
no app, as the job layer beside it (`hume/jobs/`) does.

- The HTTP client stack of LLM annotators and embedding models: `http_client` (`ChatClient`, retries, pacing,
  the key kept out of every text), `http_transport` (a kept-alive connection per thread), `aio_transport`
  (one asyncio event loop, httptools), `inflight` (a run's requests in flight on that loop), `endpoint_policy`
  (where the server may send requests at all).
- Imports and exports: `import_reader` (files read line by line in bounded memory, problems naming file, line
  and field; `ImportFailed`), `upload_api` (what every import endpoint answers), `csv_safety` (CSV cells that
  cannot run as spreadsheet formulas), `sql` (`insert_rows`: bulk rows in one COPY or executemany).
- Pages: `htmx` (the one "page or partial" helper). The one role guard is `hume/roles.py`, beside this package.

Nothing here imports an app (`tests/test_import_direction.py`): what varies by app is handed in (a model
class, a budget object), never looked up.
"""
