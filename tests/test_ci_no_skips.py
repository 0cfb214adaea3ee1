"""Under CI=true every kind of skip fails the run (tests/ci_no_skips.py); on a developer's machine it stays a skip.

A real pytest process runs a throw-away test file with the plugin, once with CI=true and once without.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SKIPPING_TESTS = '''
import pytest


@pytest.fixture
def missing_service():
    pytest.skip("no service here")


def test_skips_itself():
    pytest.skip("not today")


@pytest.mark.skipif(True, reason="never on this machine")
def test_skipped_by_a_mark():
    pass


def test_skipped_by_importorskip():
    pytest.importorskip("no_such_module_for_hume")


def test_skipped_by_its_fixture(missing_service):
    pass


def test_runs():
    pass


@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_to_fail():
    assert False
'''
SKIPPED_MODULE = '''
import pytest

pytest.importorskip("no_such_module_for_hume")


def test_never_collected():
    pass
'''


def run_pytest(folder: Path, ci: str | None, source: str = SKIPPING_TESTS) -> tuple[int, dict[str, int], str]:
    """Run ``source`` as a test file in a fresh pytest process; its exit code, summary counts and output."""
    (folder / "test_throwaway.py").write_text(source)
    env = {key: value for key, value in os.environ.items() if key not in {"CI", "DJANGO_SETTINGS_MODULE"}}
    env["PYTHONPATH"] = str(REPO)
    if ci is not None:
        env["CI"] = ci
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.ci_no_skips", "-p", "no:django", "-p", "no:cacheprovider",
         "-q", "-rA", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    summary = result.stdout.strip().splitlines()[-1]
    return result.returncode, {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary)}, result.stdout


def test_under_ci_every_kind_of_skip_fails_the_run_and_says_why(tmp_path):
    code, counts, output = run_pytest(tmp_path, "true")
    # a skip in the setup phase (a skipif mark, a fixture) fails as an error, as any setup failure does
    assert (code, counts) == (1, {"failed": 2, "errors": 2, "passed": 1, "xfailed": 1}), output
    assert "skipped under CI=true, which must run every test: Skipped: not today" in output
    assert "never on this machine" in output and "no service here" in output
    assert "could not import 'no_such_module_for_hume'" in output


def test_under_ci_a_module_that_skips_itself_is_a_collection_error(tmp_path):
    code, counts, output = run_pytest(tmp_path, "true", SKIPPED_MODULE)
    assert (code, counts) == (2, {"error": 1}), output
    assert "ERROR test_throwaway.py - skipped under CI=true, which must run every test" in output


def test_without_ci_a_skip_stays_a_skip(tmp_path):
    assert run_pytest(tmp_path, None)[:2] == (0, {"passed": 1, "skipped": 4, "xfailed": 1})
    assert run_pytest(tmp_path, "false")[:2] == (0, {"passed": 1, "skipped": 4, "xfailed": 1})
    assert run_pytest(tmp_path, None, SKIPPED_MODULE)[:2] == (pytest.ExitCode.NO_TESTS_COLLECTED, {"skipped": 1})
