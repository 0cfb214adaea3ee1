"""A small SAGE study (tests/sage_study/, every category) run end to end for the classical metrics."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz import fuzz
from sklearn.feature_extraction.text import HashingVectorizer

from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.datasets import SageDataError, load_study
from agreement.sage.study import Scorer, perturb_study, run_study
from agreement.sage.table import render
from measures.model_runs.classical import EmptyText
from measures.sage import categories as cat

STUDY = Path(__file__).parent / "sage_study"
LEV, JAC = BASELINE_METRICS["levenshtein"], BASELINE_METRICS["jaccard"]


@pytest.fixture(scope="module")
def table():
    return run_study(load_study(STUDY), [LEV, JAC], seed=0)


def test_every_category_is_scored_and_overall_is_the_mean_of_the_five(table):
    assert table["missing_categories"] == []
    for row in table["rows"]:
        scores = [row["scores"][c] for c in cat.CATEGORIES]
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert row["overall"] == pytest.approx(sum(scores) / 5)


def test_the_same_seed_gives_the_same_table_and_another_seed_other_texts(table):
    study = load_study(STUDY)
    assert run_study(study, [LEV, JAC], seed=0) == table
    assert perturb_study(study, 0).robustness != perturb_study(study, 1).robustness


def test_pairwise_preference_is_the_metric_on_the_decided_comparisons(table):
    # Computed here from rapidfuzz directly: 4 decided comparisons, the tie (c5) left out.
    rows = [json.loads(line) for line in (STUDY / "human_preference/comparisons.jsonl").read_text().splitlines()]
    decided = [r for r in rows if r["preferred"] != "tie"]
    hits = [(fuzz.ratio(r["source"], r["summary_a"]) > fuzz.ratio(r["source"], r["summary_b"]))
            == (r["preferred"] == "a") for r in decided]
    pairwise = table["subtables"]["human_preference"]["Levenshtein Ratio"]["pairwise"]
    assert pairwise["accuracy"] == pytest.approx(sum(hits) / len(hits))
    assert (pairwise["n"], pairwise["n_ties_excluded"]) == (4, 1)


def test_subtables_hold_one_value_per_dataset(table):
    sub = table["subtables"]
    assert set(sub["sensitivity"]["Jaccard Similarity"]["insertion"]) == {"essays", "news"}
    assert set(sub["robustness"]["Jaccard Similarity"]["news"]) == {
        "summary_over_semantic", "superficial_over_summary", "superficial_over_semantic", "score"}
    retrieval = sub["retrieval"]["Levenshtein Ratio"]["mini"]
    assert len(retrieval["ndcg_at_10"]) == 18
    ratios = [v / retrieval["ndcg_at_10_original"] for v in retrieval["ndcg_at_10"].values()]
    assert retrieval["score"] == pytest.approx(len(ratios) / sum(1 / r for r in ratios))


def test_jaccard_cannot_tell_a_word_shuffle_from_the_original(table):
    # Word shuffling keeps the token set, so Jaccard rates it 1: "superficial over semantic" never holds.
    assert table["subtables"]["robustness"]["Jaccard Similarity"]["news"]["superficial_over_semantic"] == 0.0


def test_an_embedding_scorer_ranks_and_clusters_with_the_cosine_of_its_vectors():
    vectorizer = HashingVectorizer(n_features=256, alternate_sign=False)

    def embed(texts):
        return vectorizer.transform(texts).toarray()

    def similarity(a, b):
        x, y = embed(a), embed(b)
        return (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)

    model = Scorer("hashing", similarity, embed=embed, group="embedding")
    texts = ["bread with yeast", "yeast bread dough", "stock market"]
    grid = similarity([a for a in texts for _ in texts], [b for _ in texts for b in texts]).reshape(3, 3)
    assert model.matrix(texts, texts) == pytest.approx(grid)
    result = run_study(load_study(STUDY), [model, LEV], seed=0)
    assert [r["group"] for r in result["rows"]] == ["embedding", "classical"]


def test_classical_metrics_on_hand_computed_pairs():
    # Levenshtein ratio (A.7.1): (|x| + |y| − indel distance) / (|x| + |y|) = (4 + 3 − 1) / 7.
    assert LEV.pairs(["abcd"], ["abc"]) == pytest.approx([6 / 7])
    assert LEV.matrix(["abcd", "xy"], ["abc"]) == pytest.approx(np.array([[6 / 7], [0.0]]))
    # Jaccard (A.7.1): {the, cat, sat} vs {the, cat, ran}: 2 shared of 4.
    assert JAC.pairs(["the cat sat"], ["the cat ran"]) == pytest.approx([0.5])
    # Case and punctuation count, as with the paper's tiktoken: {The, cat, .} vs {the, cat}: 1 shared of 4.
    assert JAC.matrix(["The cat."], ["the cat", "The cat."]) == pytest.approx(np.array([[0.25, 1.0]]))
    # The registry refuses an empty text (model_runs/classical.py) rather than inventing a similarity.
    with pytest.raises(EmptyText, match="pair 0: text a is empty"):
        JAC.pairs([""], [""])


def test_a_scorer_that_returns_the_wrong_number_of_values_is_named():
    broken = Scorer("broken", lambda a, b: np.zeros(1))
    with pytest.raises(ValueError, match="scorer 'broken' returned 1 values"):
        run_study(load_study(STUDY), [broken])


# Table 1 exports

def test_table_1_exports_as_csv_with_the_category_columns(table):
    lines = render(table, "csv").splitlines()
    assert lines[0] == "model,group,clustering,human_preference,robustness,sensitivity,retrieval,overall"
    assert lines[1].startswith("Jaccard Similarity,classical,")


def test_table_1_latex_has_the_papers_shape(table):
    latex = render(table, "latex")
    assert r"Model / Metric & Clustering & Human Pref. & Robustness & Sensitivity & Retrieval & Overall \\" in latex
    assert r"\multicolumn{7}{l}{\textit{Classical Metrics}} \\" in latex
    body = [line for line in latex.splitlines() if line.startswith(("Jaccard", "Levenshtein"))]
    assert len(body) == 2 and all(line.count("&") == 6 for line in body)
    assert latex.count(r"\begin{tabular}{lcccccc}") == 1 and latex.rstrip().endswith(r"\end{table}")


def test_table_1_json_round_trips(table):
    assert json.loads(render(table, "json")) == table


# Bad study files: file, line and field, and nothing runs

def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "study"
    shutil.copytree(STUDY, root)
    return root


@pytest.mark.parametrize(("relative", "line", "message"), [
    ("human_preference/comparisons.jsonl", '{"id": "x", "source": "s", "summary_a": "a", "summary_b": "b", '
     '"preferred": "c"}', r"comparisons.jsonl:6: field 'preferred': must be 'a', 'b' or 'tie'"),
    ("human_preference/ratings.jsonl", '{"id": "x", "source": "s", "summary": "a", "ratings": {"overall": "7"}}',
     r"ratings.jsonl:7: field 'ratings.overall': must be a finite number"),
    ("robustness/news.jsonl", '{"id": "x", "text": "a text"}', r"news.jsonl:4: field 'summary'"),
    ("clustering/topics.jsonl", '{"id": "x", "texts": ["a", "b"], "labels": ["1"]}',
     r"topics.jsonl:3: field 'labels': must be a list of 2 labels"),
    ("sensitivity/essays.jsonl", '{"id": "e1", "text": "again"}', r"essays.jsonl:3: field 'id': duplicate id 'e1'"),
    ("sensitivity/essays.jsonl", "{not json", r"essays.jsonl:3: not valid JSON"),
    ("sensitivity/essays.jsonl", '{"id": ' + "9" * 5001 + "}",
     r"essays.jsonl:3: field 'id': a number of 5001 digits \(line 1, column 8\), over the 4300-digit limit"),
    ("sensitivity/essays.jsonl", "[" * 100_000, r"essays.jsonl:3: invalid JSON: nested too deeply"),
    ("retrieval/mini/qrels/test.tsv", "q1\tnope\t1", r"test.tsv:6: field 'corpus-id': 'nope' is not in corpus"),
])
def test_a_bad_line_is_reported_with_file_line_and_field(tmp_path, relative, line, message):
    root = _copy(tmp_path)
    with (root / relative).open("a") as handle:
        handle.write(line + "\n")
    with pytest.raises(SageDataError, match=message):
        load_study(root)


def test_a_folder_without_any_sage_dataset_is_refused(tmp_path):
    with pytest.raises(SageDataError, match="holds no SAGE dataset"):
        load_study(tmp_path)


@pytest.mark.parametrize(("relative", "data", "message"), [
    ("robustness/news.jsonl", b'{"id": "x", "text": "\xff"}\n', r"news.jsonl:4: is not valid UTF-8: byte offset"),
    ("retrieval/mini/qrels/test.tsv", b"\xfe\tq1\t1\n", r"test.tsv:6: is not valid UTF-8"),
    ("retrieval/mini/qrels/test.tsv", b"q" * 140_000 + b"\td1\t1\n",
     r"test.tsv:6: field 'query-id': 'q{40}…' is not in queries.jsonl"),
    ("sensitivity/essays.jsonl", b'{"id": "long", "text": "' + b"a" * 2**20 + b'"}\n',
     r"essays.jsonl:3: the line is longer than the limit of 1,048,576 bytes \(MAX_IMPORT_LINE_BYTES\)"),
])
def test_bytes_that_are_not_utf8_and_overlong_lines_or_fields_are_named_by_file_and_line(tmp_path, relative, data,
                                                                                          message):
    """Issue 35, items 3 and 4: the `sage` command read these with a UnicodeDecodeError or a _csv.Error (a field
    over csv's 131,072 characters); they are read as dataset imports read theirs."""
    root = _copy(tmp_path)
    with (root / relative).open("ab") as handle:
        handle.write(data)
    with pytest.raises(SageDataError, match=message):
        load_study(root)
