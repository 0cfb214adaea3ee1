"""The upload size cap (issue 23, item 8): a request body over MAX_UPLOAD_BYTES is answered 413 from its
Content-Length, before anything reads the body.

A 383 MB dataset posted to the import page was streamed to disk and parsed inside the web request until
gunicorn's 30 s timeout killed it: a bare 500, nothing stored. This middleware sits before the CSRF check (the
first thing that would read the body) and refuses such a request at once, with a message saying the limit
and how to import bigger files (the management commands, which have no web request to time out). The API
(/api/) gets JSON, like its other errors (`detail`, `errors`); pages get the 413 page. A view with its own
upload limit and answer (the MTEB results import, RESULTS_MAX_UPLOAD_BYTES) says so with
`checks_own_upload_size = True` and is left to it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

FORM_OVERHEAD = 64 * 1024  # the multipart framing and the small form fields around a file


def checks_own_upload_size(view: Any) -> bool:
    return bool(getattr(view, "checks_own_upload_size", False)
                or getattr(getattr(view, "view_class", None), "checks_own_upload_size", False))


def too_large_message(size: int) -> str:
    limit = settings.MAX_UPLOAD_BYTES
    return (f"upload: the request is {size:,} bytes, over the {limit:,}-byte upload limit (MAX_UPLOAD_BYTES); "
            "nothing was imported. Import bigger files with the management commands (import_task, "
            "import_annotations, import_collection)")


class UploadSizeLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> HttpResponse | None:
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return None  # Django reads no body without a valid length
        if size <= settings.MAX_UPLOAD_BYTES + FORM_OVERHEAD or checks_own_upload_size(view):
            return None
        message = too_large_message(size)
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message, "errors": [message]}, status=413)
        return render(request, "413.html", {"message": message}, status=413)
