"""`export_mteb` writes human results as MTEB TaskResult files shaped like the published human baseline,
and they load next to it with the MTEB-results importer."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agreement.results.mteb_loading import load_results_dir
from tests.hume_paper import RESULTS
from tests.report_builders import answers_from_columns, build_task, import_answers

pytestmark = pytest.mark.django_db

BASELINE = RESULTS / "baseline__Human" / "2025_09_25"
SENTIMENT = "HUMEMultilingualSentimentClassification"


def sentiment_subset(subset: str, language: str, answers: dict[str, list[str]]) -> None:
    gold = ["positive", "negative", "neutral", "positive"]
    task = build_task("classification", f"sentiment-{subset}", [{"text": f"{subset} {i}", "label": g}
                                                                for i, g in enumerate(gold)],
                      labels=["negative", "neutral", "positive"], language=language,
                      mteb_task_name=SENTIMENT, mteb_subset=subset)
    import_answers(task, answers_from_columns(answers))


@pytest.fixture
def study():
    sentiment_subset("eng", "eng-Latn", {"ann1": ["positive", "negative", "neutral", "negative"],
                                         "ann2": ["positive", "positive", "positive", "positive"]})
    sentiment_subset("ara", "ara-Arab", {"ann3": ["positive", "negative", "neutral", "positive"]})
    sts = build_task("sts", "sts12-sample", [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": s}
                                             for i, s in enumerate([0.5, 2, 3.5, 5, 1])],
                     mteb_task_name="HUMESTS12")
    import_answers(sts, answers_from_columns({"ann1": [1, 2, 3, 4, 0.5], "ann2": [0, 2.5, 3, 5, 1.5]}))


def export(out: Path, *tasks: str, extra: tuple[str, ...] = ("--revision", "2025_10_01")) -> list[str]:
    stdout = io.StringIO()
    call_command("export_mteb", *tasks, "--out", str(out), *extra, stdout=stdout)
    return stdout.getvalue().split()


def test_subsets_of_one_mteb_task_become_one_file_laid_out_like_the_results_repository(study, tmp_path) -> None:
    written = export(tmp_path, "sentiment-eng", "sentiment-ara", "sts12-sample")

    folder = tmp_path / "hume__Human" / "2025_10_01"
    aggregate = [Path(p).name for p in written if Path(p).parent == folder]
    assert sorted(aggregate) == [f"{SENTIMENT}.json", "HUMESTS12.json", "model_meta.json"]
    result = json.loads((folder / f"{SENTIMENT}.json").read_text())
    assert [s["hf_subset"] for s in result["scores"]["test"]] == ["eng", "ara"]
    eng = result["scores"]["test"][0]
    # majority vote, ties to the lexicographically first label: positive, negative, neutral, negative
    assert eng["main_score"] == eng["accuracy"] == 0.75 and eng["languages"] == ["eng-Latn"]
    assert [e["accuracy"] for e in eng["scores_per_experiment"]] == [0.75, 0.5]
    assert eng["agreement"]["metric"] == "fleiss_kappa" and eng["agreement"]["total_annotations"] == 8
    meta = json.loads((folder / "model_meta.json").read_text())
    assert (meta["name"], meta["revision"], meta["languages"]) == ("hume/Human", "2025_10_01", ["ara-Arab", "eng-Latn"])


def test_the_files_mirror_the_published_baseline_keys(study, tmp_path) -> None:
    export(tmp_path, "sentiment-eng", "sentiment-ara", "sts12-sample")
    folder = tmp_path / "hume__Human" / "2025_10_01"

    for name in (SENTIMENT, "HUMESTS12"):
        ours, theirs = (json.loads((f / f"{name}.json").read_text()) for f in (folder, BASELINE))
        assert list(ours) == list(theirs)
        mine, published = ours["scores"]["test"][0], theirs["scores"]["test"][0]
        assert set(mine) <= set(published)  # precision/recall and mse are not computed by the report
        assert {"main_score", "hf_subset", "languages", "scores_per_experiment", "agreement"} <= set(mine)
        assert list(mine["agreement"]) == list(published["agreement"])
        assert set(mine["scores_per_experiment"][0]) <= set(published["scores_per_experiment"][0])
    meta, published_meta = (json.loads((f / "model_meta.json").read_text()) for f in (folder, BASELINE))
    assert list(meta) == list(published_meta)


def test_exported_results_load_next_to_the_published_baseline(study, tmp_path) -> None:
    shutil.copytree(BASELINE.parent, tmp_path / "baseline__Human", ignore=shutil.ignore_patterns("annotator_*"))
    export(tmp_path, "sentiment-eng", "sentiment-ara", "sts12-sample", extra=("--model-name", "lab/HumanPanel"))

    rows = load_results_dir(tmp_path)

    ours = {(r.mteb_task_name, r.hf_subset): r for r in rows
            if r.model_name == "lab/HumanPanel" and r.annotator_id is None}
    assert set(ours) == {(SENTIMENT, "eng"), (SENTIMENT, "ara"), ("HUMESTS12", "default")}
    assert ours[(SENTIMENT, "ara")].main_score == 1.0 and ours[(SENTIMENT, "ara")].languages == ["ara-Arab"]
    assert ours[("HUMESTS12", "default")].agreement["metric"] == "mean_pairwise_spearman"
    assert any(r.model_name == "baseline/Human" and r.mteb_task_name == SENTIMENT for r in rows)


def test_two_tasks_claiming_the_same_subset_are_refused(study, tmp_path) -> None:
    again = build_task("classification", "sentiment-eng-again", [{"text": "x", "label": "neutral"}],
                       labels=["negative", "neutral", "positive"], mteb_task_name=SENTIMENT, mteb_subset="eng")
    import_answers(again, [{"item": "1", "annotator": "ann9", "value": "neutral"}])

    with pytest.raises(CommandError, match="share the hf_subset 'eng'"):
        export(tmp_path, "sentiment-eng", "sentiment-eng-again")
    assert not (tmp_path / "hume__Human").exists()


def test_a_model_name_must_be_org_slash_name(study, tmp_path) -> None:
    with pytest.raises(CommandError, match="org/model"):
        export(tmp_path, "sts12-sample", extra=("--model-name", "Human"))
