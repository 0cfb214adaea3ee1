"""The test suite's settings: production's defaults (hume.settings) with the embedded development mode turned
on explicitly, as scripts/run does. Set before hume.settings reads it, and left in the environment, so the
workers and commands the tests start as subprocesses run the same way; a test may still set DEBUG=false."""
import os

os.environ.setdefault("DEBUG", "true")
# A short job lease (production: 60 s), so tests that kill a worker see its job taken over within seconds.
os.environ.setdefault("JOB_LEASE_SECONDS", "10")

from hume.settings import *  # noqa: F403

# Django's default PBKDF2 hasher costs about a second per password on this two-core machine (three under load), and
# the shared fixtures (tests/conftest.py: alice, bob, carol, dave), the demo and many tests set passwords: the suite
# hashes with MD5 instead. No test is about the hasher; production keeps Django's default list (hume/settings.py
# does not set it). Worker processes and commands the tests start read these settings too.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Results name the worker and queue that ran each task (tests/test_queue_routing.py checks the routing).
CELERY_RESULT_EXTENDED = True

# The annotator models (GLAD, MACE) take seconds per report: off for the suite, on in the tests about them
# (tests/test_annotator_models_report.py turns them on with the settings fixture).
ANNOTATOR_MODELS_MAX_ANSWERS = 0

# Reports of tasks with an open crowd study wait CROWD_REPORT_DEBOUNCE_SECONDS (60 s) in production; the suite
# keeps REPORT_DEBOUNCE_SECONDS for them too, except tests/test_report_queueing.py's test of the crowd window.
CROWD_REPORT_DEBOUNCE_SECONDS = 0
