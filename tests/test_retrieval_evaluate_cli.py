"""evaluate_runs: JSON, CSV and LaTeX; a graded TREC qrels file in place of the stored references."""
from __future__ import annotations

import csv
import json
import math
from io import StringIO
from pathlib import Path

import pytest
import pytrec_eval
from django.core.management import CommandError, call_command

from tests.retrieval_helpers import RUN_FILE, judged_collection, load_minifact, load_run

pytestmark = pytest.mark.django_db


def evaluate(*args: str) -> str:
    out = StringIO()
    call_command("evaluate_runs", "MiniFact", *args, stdout=out)
    return out.getvalue()


def trec_run_dict() -> dict[str, dict[str, float]]:
    ranking: dict[str, dict[str, float]] = {}
    for line in RUN_FILE.read_text().splitlines():
        qid, _, did, _, score, _ = line.split()
        ranking.setdefault(qid, {})[did] = float(score)
    return ranking


def test_json_rows_per_subset_match_pytrec_eval_on_the_binary_qrels() -> None:
    load_minifact()
    load_run()
    rows = json.loads(evaluate("--k", "1,5,10"))
    assert [(r["ranking"], r["subset"], r["reference"]) for r in rows] == [
        ("elsewhere", "da", "qrels:test"), ("elsewhere", "en", "qrels:test")]
    qrels = {"1": {"5836": 1}, "3": {"21257": 1, "22038": 1}, "5": {"31715": 1}, "7": {"30195": 1}}
    english = {q: d for q, d in trec_run_dict().items() if q in qrels}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5", "recall.10", "map"}).evaluate(english)
    row = rows[1]
    assert row["queries"] == 4
    assert row["ndcg@5"] == pytest.approx(sum(s["ndcg_cut_5"] for s in reference.values()) / 4, abs=1e-6)
    assert row["recall@10"] == pytest.approx(sum(s["recall_10"] for s in reference.values()) / 4, abs=1e-6)
    assert row["map"] == pytest.approx(sum(s["map"] for s in reference.values()) / 4, abs=1e-6)


def test_a_graded_trec_qrels_file_replaces_the_references(tmp_path: Path) -> None:
    load_minifact()
    load_run()
    graded = tmp_path / "graded.qrels"
    graded.write_text("1 0 5836 7.5\n1 0 18670 2\n3 0 21257 9\nq101 0 d1 8\n")
    rows = json.loads(evaluate("--qrels", str(graded), "--k", "3", "--threshold", "7"))
    by_subset = {r["subset"]: r for r in rows}
    assert by_subset["en"]["reference"] == "qrels:graded.qrels" and by_subset["en"]["queries"] == 2
    # query 1 ranks 31715, 5836 (7.5), 18670 (2): DCG@3 = 7.5/log2(3) + 2/log2(4), ideal 7.5 + 2/log2(3)
    assert by_subset["en"]["ndcg@3"] != by_subset["en"]["recall@3"]
    doubled = {"1": {"5836": 15, "18670": 4}, "3": {"21257": 18}}  # pytrec_eval wants integers: gains ×2
    english = {q: d for q, d in trec_run_dict().items() if q in doubled}
    reference = pytrec_eval.RelevanceEvaluator(doubled, {"ndcg_cut.3"}).evaluate(english)
    assert reference["1"]["ndcg_cut_3"] == pytest.approx((7.5 / math.log2(3) + 1.0) / (7.5 + 2 / math.log2(3)))
    assert by_subset["en"]["ndcg@3"] == pytest.approx(
        (reference["1"]["ndcg_cut_3"] + reference["3"]["ndcg_cut_3"]) / 2, abs=1e-6)


def test_csv_and_latex_outputs() -> None:
    load_minifact()
    load_run()
    rows = list(csv.DictReader(StringIO(evaluate("--format", "csv", "--k", "10"))))
    assert [r["subset"] for r in rows] == ["da", "en"] and "ndcg@10" in rows[0]
    latex = evaluate("--format", "latex", "--k", "10,100")
    assert latex.startswith("\\begin{tabular}{lllrrr}")
    assert "ranking & subset & reference & ndcg@10 & ndcg@100 & map" in latex
    assert "elsewhere & en & qrels:test &" in latex


def test_bad_qrels_files_and_unknown_collections_are_refused(tmp_path: Path) -> None:
    load_minifact()
    load_run()
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 5836 1\nzz 0 5836 1\n1 0 nope 1\n")
    with pytest.raises(CommandError) as failed:
        evaluate("--qrels", str(bad))
    assert str(failed.value).splitlines()[1:] == [
        "bad.qrels line 2, field \"query-id\": unknown query 'zz'",
        "bad.qrels line 3, field \"corpus-id\": unknown document 'nope' for query '1'"]
    with pytest.raises(CommandError, match="no collection named 'Nope'"):
        call_command("evaluate_runs", "Nope")


def test_judgments_of_one_pool_task_score_the_runs_against_its_judges_only() -> None:
    judged_collection()
    rows = json.loads(evaluate("--judgments", "MiniFact en pool", "--k", "10", "--threshold", "judge-b=5"))
    assert sorted({(r["subset"], r["reference"], r["threshold"]) for r in rows}) == [
        ("en", "judge:judge-a", 7.0), ("en", "judge:judge-b", 5.0), ("en", "judges:mean", 7.0)]
