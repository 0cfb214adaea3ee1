"""Settings for bench/bench_crowd.py's profile mode: the loop benchmark's settings (the app's own, plus the
yardstick views) with a first middleware that reports each request's query count (bench/query_count.py)."""
from bench.reference_settings import *  # noqa: F403
from bench.reference_settings import MIDDLEWARE

MIDDLEWARE = ["bench.query_count.query_count", *MIDDLEWARE]
