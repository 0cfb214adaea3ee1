"""Exported files load with MTEB's own `TaskResult` (mteb 2.20.0, test-only): `export_model_runs` for an
in-app run (a classical metric and the shipped MiniLM) and `export_mteb` for the humans, on a task of each
kind whose scores MTEB names (every registered kind with `mteb_score_keys`). `TaskResult.from_disk` validates
each subset (main_score, hf_subset, languages, JSON-serialisable) and `ResultCache.load_results` reads the whole
folder with its model_meta.json, as MTEB reads its results repository. mteb is imported inside the tests: its
import takes seconds and must not slow the collection of the rest of the suite."""
from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from agreement.core.mteb_export import annotator_folder
from agreement.core.reports import report_in_process
from agreement.model_runs.models import ModelRun
from kinds.kind_registry import KINDS as REGISTRY
from tests import model_data as data

pytestmark = [pytest.mark.django_db,  # mteb 2.20.0 imports a sentence-transformers module its 6.x renamed
              pytest.mark.filterwarnings("ignore:Importing from 'sentence_transformers.models':DeprecationWarning")]

# {kind: the MTEB task name its probe task is exported under}, for every registered kind whose scores MTEB
# names (its scorer's `mteb_score_keys`; likert's per-axis scores have no MTEB task)
PROBE_TASKS = {name: f"HUME{kind.mteb_type}Probe" for name, kind in REGISTRY.items() if kind.scorer.mteb_score_keys}


def _tasks(kinds: tuple[str, ...] = tuple(PROBE_TASKS)) -> dict[str, Any]:
    tasks = {}
    for kind in kinds:
        mteb_name = PROBE_TASKS[kind]
        task = data.build_model_task(kind)
        task.mteb_task_name, task.mteb_subset = mteb_name, "en"
        task.save()
        tasks[kind] = task
    return tasks


def _export_runs(model: str, tasks: dict[str, Any], out: Path) -> list[Path]:
    names = [t.name for t in tasks.values()]
    for name in names:
        call_command("run_models", name, "--models", model, "--wait", stdout=io.StringIO())
    stdout = io.StringIO()
    call_command("export_model_runs", model, *names, "--out", str(out), stdout=stdout)
    return [Path(p) for p in stdout.getvalue().split()]


def _load_folder(out: Path) -> Any:
    """The whole export read by MTEB's ResultCache, as it reads a clone of its results repository."""
    from mteb.cache import ResultCache

    cache = out.parent / f"{out.name}-cache"
    shutil.copytree(out, cache / "results")
    return ResultCache(cache_path=cache).load_results(include_remote=False)


def _assert_run_loads(model: str, tasks: dict[str, Any], out: Path) -> None:
    from mteb.results import TaskResult

    written = _export_runs(model, tasks, out)
    files = {p.stem: p for p in written if p.name != "model_meta.json"}
    assert sorted(files) == sorted(PROBE_TASKS[kind] for kind in tasks)
    for kind, task in tasks.items():
        result = TaskResult.from_disk(files[PROBE_TASKS[kind]])
        gold = ModelRun.objects.get(task=task, model__name=model).scores["gold"]
        (subset,) = result.scores["test"]
        assert result.task_name == PROBE_TASKS[kind] and subset["hf_subset"] == "en"
        assert result.main_score == pytest.approx(gold["main_score"])
        assert result.get_score(languages=[task.language]) == pytest.approx(gold["main_score"])
        figures = {k: v for k, v in gold.items() if isinstance(v, float)}
        assert figures and {k: subset[k] for k in figures} == pytest.approx(figures), kind
    benchmark = _load_folder(out)
    (model_result,) = benchmark.model_results
    assert sorted(r.task_name for r in model_result.task_results) == sorted(files)


def test_a_classical_metric_run_exports_task_results_mteb_loads(tmp_path) -> None:
    call_command("add_model", "jaccard", "--backend", "classical", "--metric", "jaccard", stdout=io.StringIO())
    # a classifier needs vectors: a classical metric scores the kinds that compare two texts
    compared = tuple(name for name in PROBE_TASKS if REGISTRY[name].model_evaluation.encoder_only is None)
    _assert_run_loads("jaccard", _tasks(compared), tmp_path / "out")


def test_a_minilm_run_exports_task_results_mteb_loads_under_its_mteb_name(tmp_path) -> None:
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    _assert_run_loads("minilm", _tasks(), tmp_path / "out")
    assert (tmp_path / "out" / "sentence-transformers__all-MiniLM-L6-v2").is_dir()


def test_the_human_export_loads_with_mteb_task_result_including_annotator_folders(tmp_path) -> None:
    from mteb.results import TaskResult

    tasks = _tasks()
    stdout = io.StringIO()
    call_command("export_mteb", *(t.name for t in tasks.values()), "--out", str(tmp_path / "out"),
                 "--revision", "2025_10_01", stdout=stdout)
    written = [Path(p) for p in stdout.getvalue().split() if not p.endswith("model_meta.json")]
    aggregate = {p.stem: p for p in written if p.parent.name == "2025_10_01"}
    assert sorted(aggregate) == sorted(PROBE_TASKS.values())
    for kind, task in tasks.items():
        result = TaskResult.from_disk(aggregate[PROBE_TASKS[kind]])
        human = report_in_process(task)[0]["human"]
        (subset,) = result.scores["test"]
        assert result.main_score == pytest.approx(human["main_score"])
        assert len(subset["scores_per_experiment"]) == 2  # alice and bob
    for path in written:
        assert TaskResult.from_disk(path).main_score is not None
    benchmark = _load_folder(tmp_path / "out")
    assert {(m.model_name, m.model_revision) for m in benchmark.model_results} == {
        ("hume/Human", "2025_10_01"), *(("hume/Human", annotator_folder(n)) for n in ("alice", "bob"))}
