"""The skeleton the tests' fake OpenAI-compatible servers share: a real http.server on 127.0.0.1 (a free
port) in a daemon thread, one JSON POST endpoint, quiet logs, and replies that survive a client which gave
up (a timeout test). Subclasses set `path` and answer in `respond`; see embeddings_server.py and
llm_server.py."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class JsonServer:
    path = "/"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        handler = type("Handler", (JsonHandler,), {"owner": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def respond(self, handler: JsonHandler, body: dict[str, Any], authorization: str | None) -> None:
        """Answer one request to `path` through `handler.send`."""
        raise NotImplementedError


class JsonHandler(BaseHTTPRequestHandler):
    owner: JsonServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        if self.path.rstrip("/") != self.owner.path:
            self.send(404, '{"error": {"message": "not found"}}')
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.owner.respond(self, body, self.headers.get("Authorization"))

    def send(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        data = text.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass
