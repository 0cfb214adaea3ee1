"""WSGI entry point (gunicorn hume.wsgi).

The URL tree is loaded here, when the process starts, not on its first request: loading it imports every app's
views, about 1.7 s of CPU on the 2-core development machine, which otherwise fell on whoever came first to each
gunicorn worker (a crowd participant's arrival right after a deploy waited seconds; docs/crowd.md, "Where a
participant's request goes"). Loading it opens no database connection, so it is safe before gunicorn forks.
"""
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018  (the property imports the URL tree and its views)
