"""Under CI (CI=true) a skipped test fails the run: whatever skipped it (``pytest.skip``, ``skipif``,
``importorskip``, in a test, a fixture or at module level), so a test can never pass there by not running.

A plain pytest plugin (no Django), loaded by tests/conftest.py; tests/test_ci_no_skips.py runs it on a
throw-away test file. Expected failures (``xfail``) are not skips and stay as they are.
"""
from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest


def running_in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def fail_the_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not (report.skipped and running_in_ci()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped under CI=true, which must run every test: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    fail_the_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    fail_the_skip(outcome.get_result())
