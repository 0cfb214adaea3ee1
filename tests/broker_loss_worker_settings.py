"""Settings for the broker-loss test's worker: production's (hume.settings, DEBUG off in the environment) plus one
job that records each run, so the test counts what ran.

`tests.record_job(n)` sleeps HUME_TEST_JOB_SECONDS (so jobs are running when Redis goes) and appends `n` to the
file HUME_TEST_JOB_LOG, one line per run: a job lost is a missing line, a job run twice a repeated one."""
import os
import time

from celery import shared_task

from hume.settings import *  # noqa: F403


@shared_task(name="tests.record_job", ignore_result=True)
def record_job(n: int) -> None:
    time.sleep(float(os.environ.get("HUME_TEST_JOB_SECONDS", "0.1")))
    with open(os.environ["HUME_TEST_JOB_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{n}\n")
