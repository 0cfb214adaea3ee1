"""Leaderboard math checked against the HUME paper (El Assadi et al.), from the public results.

Every expected number cites its table or section in the paper (arXiv:2510.10062);
Tables 1 and 8 are in tests/hume_paper.py, shared with test_results_leaderboard.py.
The paper prints scores ×100 with one decimal, so values are compared to 0.1 points.
"""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from agreement.results.mteb_loading import load_results_dir
from agreement.results.table_formats import latex_escape, per_task_to_csv, table1_to_csv, table1_to_latex, to_json
from hume.lib.csv_safety import csv_cell, to_csv
from measures.results.entry_correlation import entry_scores, spearman
from measures.results.mteb_files import leaderboard_rows
from measures.results.per_task import figure2, per_task
from measures.results.subset_scores import HUME_TASK_KINDS, SubsetScore, scores_from_rows, task_kind
from measures.results.table1 import overall_rank, table1
from measures.results.win_rates import win_rates
from tests.hume_paper import PAPER_TABLE1, POINTS, RESULTS, TABLE1_COLUMNS, TABLE8

TABLE8_CI = {key: (low / 100, high / 100) for key, (_, low, high, _, _) in TABLE8.items()}


def paper_name(row) -> str:
    """The paper's short names: ``org/`` dropped, the human baseline called Human."""
    return "Human" if row.is_human_reference else row.model_name.split("/")[-1]


@pytest.fixture(scope="module")
def scores() -> list[SubsetScore]:
    return scores_from_rows(leaderboard_rows(load_results_dir(RESULTS)), name_of=paper_name)


@pytest.fixture(scope="module")
def table(scores) -> dict[str, dict]:
    return {row["name"]: row for row in table1(scores)}


# --- HUME Table 1 ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAPER_TABLE1))
def test_overall_scores_match_table_1(table, name):
    row = table[name]
    assert row["n_subsets"] == 26 and row["complete"]
    assert abs(100 * row["overall"] - PAPER_TABLE1[name][-1]) <= POINTS


@pytest.mark.parametrize("name", sorted(PAPER_TABLE1))
def test_every_kind_language_cell_matches_table_1(table, name):
    row = table[name]
    assert list(row["columns"]) == TABLE1_COLUMNS  # the paper's 14 columns, in its order
    for column, expected in zip(TABLE1_COLUMNS, PAPER_TABLE1[name], strict=False):
        assert abs(100 * row["columns"][column] - expected) <= POINTS, column


@pytest.mark.parametrize(
    ("name", "column", "paper"),
    [
        # HUME Table 1 (and §4.1: humans 95.0 on Arabic sentiment, 67.5 on Arabic STS)
        ("Human", "Classification/ara-Arab", 95.0),
        ("Human", "STS/ara-Arab", 67.5),
        ("Human", "Clustering/eng-Latn", 67.4),
        ("jasper_en_vision_language_v1", "Classification/eng-Latn", 87.1),
        ("Qwen3-Embedding-0.6B", "Clustering/ara-Arab", 78.8),
        ("e5-mistral-7b-instruct", "Reranking/eng-Latn", 96.4),
        # 92.254: Table 1 prints 92.2, Table 8 prints 92.3 for the same score
        ("multilingual-e5-large", "Reranking/nob-Latn", 92.2),
        ("all-MiniLM-L6-v2", "STS/ara-Arab", 6.2),
        ("embeddinggemma-300m", "Reranking/dan-Latn", 74.3),
    ],
)
def test_a_sample_of_table_1_cells_across_kinds_and_languages(table, name, column, paper):
    assert abs(100 * table[name]["columns"][column] - paper) <= POINTS


def test_humans_rank_4th_behind_three_large_models(scores):
    # HUME §4 and Figure 1: "Human annotators rank 4th overall with a score of 0.776",
    # best model jasper at 80.1 (Table 1)
    rows = table1(scores)
    assert [row["name"] for row in rows[:4]] == [
        "jasper_en_vision_language_v1",
        "SFR-Embedding-Mistral",
        "e5-mistral-7b-instruct",
        "Human",
    ]
    assert rows[0]["rank"] == 1 and round(100 * rows[0]["overall"], 1) == 80.1
    assert rows[3]["rank"] == 4 and round(rows[3]["overall"], 3) == 0.776
    assert overall_rank(scores, "Human") == 4


def test_the_french_subsets_are_left_out_of_the_26(scores):
    with_french = table1(scores, languages=(*{s.language for s in scores},))
    jasper = next(row for row in with_french if row["name"] == "jasper_en_vision_language_v1")
    assert jasper["n_subsets"] == 28
    gemma = next(row for row in with_french if row["name"] == "embeddinggemma-300m")
    # embeddinggemma has no fra subsets: with French in the benchmark it is incomplete
    assert gemma["n_subsets"] == 26 and gemma["overall"] is None and gemma["rank"] is None


# --- HUME Table 8 ------------------------------------------------------------------------------


def test_emotion_classification_best_model_is_outside_the_human_ci(scores):
    # HUME Table 8 / Appendix E.2: human 45.8 [32.6, 59.7], best model 75.4, starred
    row = next(
        r for r in per_task(scores, ci=TABLE8_CI) if r["task"] == "HUMEEmotionClassification"
    )
    assert round(100 * row["human"], 1) == 45.8
    assert row["ci"] == [0.326, 0.597]
    best = row["best_model"]
    assert best["name"] == "jasper_en_vision_language_v1"
    assert round(100 * best["score"], 1) == 75.4
    assert best["outside_ci"] is True
    assert best["pct_of_human"] == pytest.approx(100 * 0.754167 / 0.4583333333333333)
    assert round(best["pct_of_human"]) == 165  # 75.4 / 45.8


def test_every_table_8_row_human_best_model_and_mark(scores):
    rows = {(r["task"], r["language"]): r for r in per_task(scores, ci=TABLE8_CI)}
    assert set(rows) == set(TABLE8)
    for key, (human, _, _, best, starred) in TABLE8.items():
        assert abs(100 * rows[key]["human"] - human) <= POINTS, key
        assert abs(100 * rows[key]["best_model"]["score"] - best) <= POINTS, key
        assert rows[key]["best_model"]["outside_ci"] is starred, key
    # "Models perform outside the human confidence interval in 14 of 26 tasks" (Appendix E.2)
    assert sum(r["best_model"]["outside_ci"] for r in rows.values()) == 14


def test_a_model_score_on_the_ci_bound_is_inside(scores):
    # WikiCities: best model 100.0 on the human CI's upper bound 100.0 is not starred (Table 8)
    row = next(r for r in per_task(scores, ci=TABLE8_CI) if r["task"] == "HUMEWikiCitiesClustering")
    assert row["best_model"]["score"] == 1.0 and row["best_model"]["outside_ci"] is False


def test_without_a_ci_no_model_is_marked(scores):
    row = per_task(scores)[0]
    assert row["ci"] is None and {cell["outside_ci"] for cell in row["models"]} == {None}


# --- Win rates (HUME §4.1, §4.2, Appendix G) ---------------------------------------------------


def test_humans_win_15_percent_against_the_best_model_and_62_against_the_median(scores):
    overall = win_rates(scores)["overall"]
    # §4.1: "exceeding median model performance (61.5% of tasks) while rarely matching the best
    # models (15.4% of tasks)"; Figure 13: "on only 4 tasks"; Figure 12 also gives 62% vs mean
    assert overall["n"] == 26
    assert overall["wins"] == {"best": 4, "median": 16, "mean": 16}
    assert round(100 * overall["rate"]["best"], 1) == 15.4
    assert round(100 * overall["rate"]["median"], 1) == 61.5


def test_win_rates_by_scope_language_and_kind(scores):
    rates = win_rates(scores)
    # §4.2: "29% win rate on multilingual tasks versus 0% on English-only tasks against best"
    assert rates["by_scope"]["multilingual"]["wins"]["best"] == 4
    assert rates["by_scope"]["multilingual"]["n"] == 14
    assert round(100 * rates["by_scope"]["multilingual"]["rate"]["best"]) == 29
    assert rates["by_scope"]["monolingual"]["rate"]["best"] == 0.0
    # §4.2: Arabic "67% win rate against the best models and 100% against the mean"
    assert round(100 * rates["by_language"]["ara-Arab"]["rate"]["best"]) == 67
    assert rates["by_language"]["ara-Arab"]["rate"]["mean"] == 1.0
    # §4.1: "humans outperforming all models in 3 of 7 [classification] tasks"
    assert rates["by_kind"]["Classification"]["wins"]["best"] == 3
    assert rates["by_kind"]["Classification"]["n"] == 7


# --- HUME Figure 2 -----------------------------------------------------------------------------


def test_figure_2_places_the_human_within_the_model_range(scores):
    rows = figure2(scores)
    assert len(rows) == 26
    emotion = next(row for row in rows if row["task"] == "HUMEEmotionClassification")
    assert emotion["max"] == 0.754167  # jasper, Table 5
    assert emotion["min"] == 0.3375  # multilingual-e5-small 33.8, Table 5
    assert emotion["median"] == 0.439583  # all-mpnet-base-v2 44.0, Table 5
    assert emotion["n_models"] == 13
    # Figure 13: the human is above the best model on 4 subsets only
    assert sum(row["human"] > row["max"] for row in rows) == 4


# --- Human vs LLM correlation (HUME §4.4, Tables 10–13) ----------------------------------------

# Tables 10–12, the 19 non-clustering subsets: Human, GPT-5 Full, GPT-4.1 Mini, Mistral Small.
LLM_TABLES = {
    ("Emotion", "eng"): (45.8, 37.5, 29.2, 43.1),
    ("MultilingualSentiment", "ara"): (95.0, 92.5, 90.0, 90.5),
    ("MultilingualSentiment", "eng"): (77.5, 100.0, 95.0, 97.2),
    ("MultilingualSentiment", "nob"): (85.0, 92.5, 82.5, 86.8),
    ("MultilingualSentiment", "rus"): (92.5, 87.5, 85.0, 64.0),
    ("ToxicConversations", "eng"): (73.3, 73.3, 75.6, 69.6),
    ("TweetSentiment", "eng"): (84.4, 68.9, 75.6, 65.6),
    ("Core17", "eng"): (85.2, 76.6, 78.0, 74.4),
    ("News21", "eng"): (92.7, 72.9, 78.2, 77.4),
    ("Robust04", "eng"): (88.5, 75.7, 79.3, 77.2),
    ("Wikipedia", "dan"): (91.4, 84.7, 83.6, 84.0),
    ("Wikipedia", "eng"): (82.4, 69.6, 68.6, 75.1),
    ("Wikipedia", "nob"): (89.8, 71.5, 75.8, 79.6),
    ("SICK-R", "eng"): (82.6, 68.5, 72.9, 66.7),
    ("STS12", "eng"): (91.2, 83.2, 87.8, 83.9),
    ("STS22", "ara"): (67.5, 57.1, 55.8, 56.9),
    ("STS22", "eng"): (78.4, 67.8, 79.7, 78.2),
    ("STS22", "rus"): (58.7, 71.9, 66.6, 78.6),
    ("STSBenchmark", "eng"): (80.4, 89.3, 86.3, 85.4),
}
LLMS = ("GPT-5 Full", "GPT-4.1 Mini", "Mistral Small")


def llm_scores() -> list[SubsetScore]:
    items = []
    for (task, language), values in LLM_TABLES.items():
        for name, value in zip(("Human", *LLMS), values, strict=True):
            agent = "human" if name == "Human" else "llm"
            items.append(SubsetScore(name, agent, task, language, value / 100))
    return items


@pytest.mark.parametrize(
    ("llm", "rho", "p_value"),
    [("GPT-5 Full", 0.47, 0.042), ("GPT-4.1 Mini", 0.57, 0.012), ("Mistral Small", 0.30, 0.215)],
)
def test_spearman_between_human_and_llm_reproduces_table_13(llm, rho, p_value):
    items = llm_scores()
    result = spearman(entry_scores(items, "Human"), entry_scores(items, llm))
    assert result["n"] == 19
    assert round(result["rho"], 2) == rho
    assert round(result["p_value"], 3) == p_value


def test_spearman_is_undefined_for_constant_or_too_short_vectors():
    assert spearman({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1.0, "b": 2.0, "c": 3.0})["rho"] is None
    assert spearman({"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0}) == {
        "rho": None,
        "p_value": None,
        "n": 2,
    }


# --- entries of every agent, and edge cases -----------------------------------------------------


def synthetic(*items: tuple[str, str, str, str, float]) -> list[SubsetScore]:
    return [SubsetScore(*item) for item in items]


def test_an_entry_missing_a_subset_gets_columns_but_no_overall_or_rank():
    items = synthetic(
        ("m1", "model", "HUMESTS12", "eng-Latn", 0.8),
        ("m1", "model", "HUMESTS22", "ara-Arab", 0.2),
        ("m2", "model", "HUMESTS12", "eng-Latn", 0.6),
        ("m2", "model", "HUMESTS22", "ara-Arab", 0.6),
        ("gpt", "llm", "HUMESTS12", "eng-Latn", 0.9),
        ("our annotators", "human", "HUMESTS22", "ara-Arab", 0.7),
    )
    rows = {row["name"]: row for row in table1(items)}
    assert (rows["m2"]["rank"], rows["m1"]["rank"]) == (1, 2)  # 0.6 > 0.5
    assert rows["gpt"]["overall"] is None and rows["gpt"]["rank"] is None
    assert rows["gpt"]["columns"] == {"STS/ara-Arab": None, "STS/eng-Latn": 0.9}
    assert rows["our annotators"]["n_subsets"] == 1 and not rows["our annotators"]["complete"]


def test_an_entry_with_no_subset_in_the_languages_is_listed_empty():
    items = synthetic(
        ("m", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("french llm", "llm", "HUMESTS22", "fra-Latn", 0.9),
        ("h", "human", "HUMESTS12", "eng-Latn", 0.7),
    )
    rows = {row["name"]: row for row in table1(items)}
    assert rows["french llm"]["n_subsets"] == 0 and rows["french llm"]["rank"] is None
    (row,) = per_task(items, against=("model", "llm"))
    assert [cell["name"] for cell in row["models"]] == ["m"]


def test_equal_overall_scores_share_a_rank():
    items = synthetic(
        ("a", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("b", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("c", "model", "HUMESTS12", "eng-Latn", 0.4),
    )
    assert [(row["name"], row["rank"]) for row in table1(items)] == [("a", 1), ("b", 1), ("c", 3)]


def test_callers_name_the_kind_of_tasks_outside_hume():
    assert task_kind("HUMESICK-R") == "STS"
    assert len(HUME_TASK_KINDS) == 16
    assert task_kind("Banking77Classification", {"Banking77Classification": "Classification"})
    with pytest.raises(ValueError, match="unknown task kind for 'Banking77Classification'"):
        task_kind("Banking77Classification")


def test_the_human_to_compare_must_be_named_when_there_are_two():
    items = synthetic(
        ("m", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("reference", "human", "HUMESTS12", "eng-Latn", 0.8),
        ("ours", "human", "HUMESTS12", "eng-Latn", 0.7),
    )
    with pytest.raises(ValueError, match="pick the human entry"):
        win_rates(items)
    assert win_rates(items, human="ours")["overall"]["wins"]["best"] == 1


def test_a_tie_with_the_best_model_is_not_a_win():
    items = synthetic(
        ("m", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("h", "human", "HUMESTS12", "eng-Latn", 0.5),
    )
    assert win_rates(items)["overall"]["wins"] == {"best": 0, "median": 0, "mean": 0}


def test_llms_can_be_compared_like_models():
    items = synthetic(
        ("m", "model", "HUMESTS12", "eng-Latn", 0.5),
        ("gpt", "llm", "HUMESTS12", "eng-Latn", 0.9),
        ("h", "human", "HUMESTS12", "eng-Latn", 0.7),
    )
    (row,) = per_task(items, against=("model", "llm"))
    assert [cell["name"] for cell in row["models"]] == ["gpt", "m"] and row["human_rank"] == 2


def test_duplicate_or_inconsistent_scores_are_refused():
    with pytest.raises(ValueError, match="two scores for HUMESTS12/eng-Latn"):
        table1(
            synthetic(
                ("m", "model", "HUMESTS12", "eng-Latn", 0.5),
                ("m", "model", "HUMESTS12", "eng-Latn", 0.6),
            )
        )
    with pytest.raises(ValueError, match="agent 'robot'"):
        table1(synthetic(("m", "robot", "HUMESTS12", "eng-Latn", 0.5)))
    with pytest.raises(ValueError, match="not finite"):
        table1(synthetic(("m", "model", "HUMESTS12", "eng-Latn", math.nan)))


# --- output formats ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd", "'+cmd"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTAB", "'\tTAB"),
        ("\rCR", "'\rCR"),
        ("-0.5", "-0.5"),
        ("+12", "+12"),
        ("1e-3", "1e-3"),
        (-3.25, "-3.25"),
        ("e5-base", "e5-base"),
        (None, ""),
    ],
)
def test_csv_cells_cannot_run_as_spreadsheet_formulas(value, cell):
    assert csv_cell(value) == cell


def test_to_csv_escapes_names_and_round_trips():
    text = to_csv(["name", "score"], [["=1+1", -0.5], ["a,b", 0.25]])
    assert list(csv.reader(io.StringIO(text))) == [
        ["name", "score"],
        ["'=1+1", "-0.5"],
        ["a,b", "0.25"],
    ]


def test_table_1_exports_as_json_csv_and_latex(scores):
    rows = table1(scores)
    assert json.loads(to_json(rows))[3]["name"] == "Human"
    lines = list(csv.reader(io.StringIO(table1_to_csv(rows))))
    assert lines[0][:3] == ["rank", "name", "agent"] and lines[0][-2:] == ["overall", "n_subsets"]
    human = next(line for line in lines if line[1] == "Human")
    assert human[0] == "4" and human[-2:] == ["77.6", "26"] and human[3] == "95.0"
    latex = table1_to_latex(rows, caption="Humans vs models", label="tab:hume")
    assert r"jasper\_en\_vision\_language\_v1" in latex
    assert r"\textbf{95.0}" in latex  # Human, Classification/ara: best of all (Table 1 bold)
    assert r"\underline{77.5}" in latex  # SFR, Classification/ara: best model (Table 1 underline)
    assert r"\multicolumn{4}{c}{Classification}" in latex and r"\label{tab:hume}" in latex


def test_table_8_exports_as_csv(scores):
    lines = list(csv.reader(io.StringIO(per_task_to_csv(per_task(scores, ci=TABLE8_CI)))))
    emotion = next(line for line in lines if line[0] == "EmotionClassification")
    assert emotion[3:10] == [
        "45.8",
        "32.6",
        "59.7",
        "7",
        "jasper_en_vision_language_v1",
        "75.4",
        "True",
    ]


def test_latex_special_characters_in_names_are_escaped():
    assert latex_escape(r"a_b & 50% $x$ #1 {y} ~z^ \o") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{}z\textasciicircum{} \textbackslash{}o"
    )
    items = synthetic(("evil_{model}&", "model", "HUMESTS12", "eng-Latn", 0.5))
    assert r"evil\_\{model\}\&" in table1_to_latex(table1(items))


def test_json_export_refuses_nan():
    with pytest.raises(ValueError):
        to_json([{"overall": math.nan}])
