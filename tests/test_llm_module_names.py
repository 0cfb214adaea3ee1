"""Every module of annotation/llm/ has a name no other module of the app uses (issue 21 item 5), Django's and
Celery's conventional names aside: a reader who sees `run_executor` or `request_claims` knows which file it is."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_FOLDERS = ("hume", "tasks_app", "annotation", "agreement", "kinds", "measures")
# The names the frameworks expect in every app or package (Django, DRF routers, Celery autodiscovery).
CONVENTIONAL = {"__init__", "admin", "api", "apps", "forms", "models", "tasks", "urls", "views"}


def app_modules() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for folder in APP_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if "migrations" not in path.parts:
                found[path.stem].append(path.relative_to(ROOT).as_posix())
    return found


def test_every_llm_module_name_is_used_once_in_the_app() -> None:
    modules = app_modules()
    llm = sorted(path.stem for path in (ROOT / "annotation" / "llm").glob("*.py"))
    repeated = {name: modules[name] for name in llm if name not in CONVENTIONAL and len(modules[name]) > 1}
    assert repeated == {}
    assert {"run_control", "run_executor", "request_claims", "asking", "run_progress", "prompting"} <= set(llm)
    assert "runs" not in llm and "prompts" not in llm
