"""Settings for the loop benchmark's server: the app's own settings, plus the yardstick views of
bench/reference_urls.py. Only bench/bench_assignment.py uses this (DJANGO_SETTINGS_MODULE for its gunicorn)."""
from hume.settings import *  # noqa: F403  (the very settings production runs, nothing else changed)

ROOT_URLCONF = "bench.reference_urls"
