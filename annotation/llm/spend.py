"""The spend cap of a remote endpoint (issue 23): a budget of HTTP requests that an admin sets per endpoint.

Each paid endpoint row, an LLM annotator's configuration (`LLMAnnotatorConfig`) and a registered
/v1/embeddings model (`EmbeddingModel`), has `max_requests` (empty: no cap) and `requests_sent`, the HTTP
requests sent to it so far by every run, retries included. Before each request the client takes one from the
budget with one conditional UPDATE (`requests_sent < max_requests`), atomic across threads and worker
processes; when none is left it raises SpendCapReached, a fatal EndpointError that is never retried, and the
run stops with that reason (an LLM run fails with it; an embedding run's chunk fails and the run with it).
Nothing is sent beyond the cap. An admin continues by raising `max_requests` (or setting `requests_sent` back)
in the Django admin and starting or resuming the run; what was already answered or cached is not asked again.

A count of requests, not of tokens or money, because it is known before a request is sent: the tokens of a
reply are known only once it is paid for, so a token or cost cap could only stop a run after passing it.
The cost of the tokens actually used is shown beside the counts where prices are set (LLM runs).
"""
from __future__ import annotations

import threading
from typing import Any

from django.db import connection
from django.db.models import F, Q

from hume.lib.http_client import EndpointError


class SpendCapReached(EndpointError):
    def __init__(self, message: str, attempts: int = 0) -> None:
        super().__init__(message, kind="spend_cap", attempts=attempts, fatal=True)


class RequestBudget:
    """Takes one request from an endpoint row's budget before each HTTP request (`ChatClient.budget`)."""

    def __init__(self, row_model: Any, pk: int, label: str) -> None:
        self.row_model, self.pk, self.label = row_model, pk, label

    def __repr__(self) -> str:
        return f"RequestBudget({self.label!r})"

    def take(self) -> None:
        """Count one request, or raise SpendCapReached. Off the main thread (the client's event loop hands it
        to a thread) the thread's database connection is closed again, so no connection outlives the run."""
        try:
            self._take()
        finally:
            if threading.current_thread() is not threading.main_thread():
                connection.close()

    def _take(self) -> None:
        rows = self.row_model.objects.filter(pk=self.pk)
        if rows.filter(Q(max_requests__isnull=True) | Q(requests_sent__lt=F("max_requests"))).update(
                requests_sent=F("requests_sent") + 1):
            return
        state = rows.values("max_requests", "requests_sent").first() or {"max_requests": 0, "requests_sent": 0}
        raise SpendCapReached(
            f"spend cap reached: {self.label} has been sent {state['requests_sent']} HTTP requests, its cap "
            f"(max_requests = {state['max_requests']}); nothing more was sent. An admin can raise max_requests "
            "to continue (docs/llm.md, \"Spend caps\").")
