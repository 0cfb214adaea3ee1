"""Every request that stores a job while the broker is down answers at once that the job is queued (issue 35,
item 5), also where the view itself does not catch `hume.jobs.BrokerDown` (an LLM run, a BM25 ranking, a judge
panel's refresh): the job is stored and its message waits in the job layer's outbox (hume/jobs/outbox.py), so a
500 would be wrong.

The API answers 202 with the message as `detail`; a page gets the message and goes back where the form was (the
Referer on this site, else the home page), and an htmx request is told to load that page (`HX-Redirect`), so the
whole page shows the message. Views that say more (which job, its page) catch `BrokerDown` themselves.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.utils.http import url_has_allowed_host_and_scheme

from hume.jobs import BrokerDown
from hume.lib.htmx import wants_partial


class BrokerDownAnswers:
    """Django middleware: an uncaught BrokerDown becomes "queued, the broker is down" instead of a 500."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, BrokerDown):
            return None
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": str(exception)}, status=202)
        messages.warning(request, f"{exception}.")
        back = request.headers.get("Referer", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
            back = "/"
        if wants_partial(request):
            return HttpResponse(status=204, headers={"HX-Redirect": back})
        return HttpResponseRedirect(back)
