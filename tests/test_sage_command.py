"""`python manage.py sage run`: a SAGE study from the command line, Table 1 in JSON, CSV or LaTeX."""
from __future__ import annotations

import importlib.util
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

STUDY = str(Path(__file__).parent / "sage_study")


def sage(*args: str) -> str:
    out = StringIO()
    call_command("sage", "run", "--datasets", STUDY, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_prints_table_1_for_the_classical_metrics_in_every_format():
    table = json.loads(sage("--metrics", "levenshtein,jaccard", "--format", "json"))
    assert [r["name"] for r in table["rows"]] == ["Jaccard Similarity", "Levenshtein Ratio"]
    csv_lines = sage("--metrics", "levenshtein,jaccard", "--format", "csv").splitlines()
    jaccard = table["rows"][0]
    assert csv_lines[1] == "Jaccard Similarity,classical," + ",".join(
        f"{jaccard['scores'][c]:.3f}" for c in table["categories"]) + f",{jaccard['overall']:.3f}"
    assert r"\textit{Classical Metrics}" in sage("--metrics", "jaccard", "--format", "latex")


def test_subtables_print_one_number_a_row():
    table = json.loads(sage("--metrics", "jaccard"))
    lines = sage("--metrics", "jaccard", "--format", "csv", "--subtables").splitlines()
    assert lines[0] == "category,model,key,value"
    relation = table["subtables"]["robustness"]["Jaccard Similarity"]["news"]["superficial_over_summary"]
    assert f"robustness,Jaccard Similarity,news.superficial_over_summary,{relation:.3f}" in lines
    assert sum(line.startswith("retrieval,Jaccard Similarity,mini.ndcg_at_10.") for line in lines) == 18


def test_the_same_seed_prints_the_same_table():
    assert sage("--metrics", "jaccard", "--seed", "3") == sage("--metrics", "jaccard", "--seed", "3")


def test_it_writes_the_table_to_a_file(tmp_path):
    target = tmp_path / "table1.tex"
    assert sage("--metrics", "jaccard", "--format", "latex", "--output", str(target)) == ""
    assert target.read_text().startswith(r"\begin{table}")


@pytest.mark.django_db
def test_registered_models_are_scored_through_the_model_registry():
    if importlib.util.find_spec("agreement.model_runs") is None:
        with pytest.raises(CommandError, match=r"agreement\.model_runs.*--metrics levenshtein,jaccard"):
            sage("--models", "all-MiniLM-L6-v2")
        return
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    call_command("add_model", "lev", "--backend", "classical", "--metric", "levenshtein", stdout=StringIO())
    table = json.loads(sage("--models", "minilm,lev", "--metrics", "levenshtein"))
    rows = {r["name"]: r for r in table["rows"]}
    assert [r["group"] for r in table["rows"]] == ["embedding", "classical", "classical"]
    assert all(v is not None for v in rows["minilm"]["scores"].values())
    # The registry's Levenshtein and this module's are both rapidfuzz's ratio: the same row.
    assert rows["lev"]["scores"] == pytest.approx(rows["Levenshtein Ratio"]["scores"])
    with pytest.raises(CommandError, match="no registered model named nope"):
        sage("--models", "nope")


def test_unknown_metric_and_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(CommandError, match="unknown metric.*nope; known: levenshtein, jaccard, rouge, tfidf, bm25"):
        sage("--metrics", "nope")
    (tmp_path / "sensitivity").mkdir()
    (tmp_path / "sensitivity" / "docs.jsonl").write_text('{"id": "1", "text": ""}\n')
    with pytest.raises(CommandError, match=r"docs.jsonl:1: field 'text': must be a non-empty string"):
        call_command("sage", "run", "--datasets", str(tmp_path), "--metrics", "jaccard", stdout=StringIO())
