"""HUME's comparison reproduced through the Django path: import command → database → pages, exports, CLI.

Expected numbers cite the HUME paper (arXiv:2510.10062: Table 1, Table 8, §4.1–4.2); the two
tables are in tests/hume_paper.py, shared with test_leaderboard_math.py. The
paper prints scores ×100 with one decimal, so values are compared to 0.1 points.
"""
from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from agreement.results.models import ResultRevision
from tests.hume_paper import OVERALL, POINTS, TABLE8, table1_cell


@pytest.fixture
def researcher(hume_results: None, dave) -> Client:
    client = Client()
    client.force_login(dave)
    return client


def paper_name(name: str) -> str:
    return "Human" if name == "baseline/Human" else name.split("/")[-1]


def leaderboard_json(*args: str) -> list[dict]:
    out = StringIO()
    call_command("leaderboard", *args, stdout=out)
    return json.loads(out.getvalue())


# --- HUME Table 1 through the leaderboard command ------------------------------------------------


@pytest.mark.django_db
def test_overall_scores_of_all_13_models_and_the_human_match_table_1(hume_results):
    rows = {paper_name(row["name"]): row for row in leaderboard_json()}
    assert set(rows) == set(OVERALL)
    for name, overall in OVERALL.items():
        assert abs(100 * rows[name]["overall"] - overall) <= POINTS, name
        assert rows[name]["n_subsets"] == 26


@pytest.mark.django_db
def test_the_human_reference_ranks_4th_behind_three_large_models(hume_results):
    rows = leaderboard_json("--format", "json")
    assert [(paper_name(row["name"]), row["rank"]) for row in rows[:5]] == [
        ("jasper_en_vision_language_v1", 1), ("SFR-Embedding-Mistral", 2), ("e5-mistral-7b-instruct", 3),
        ("Human", 4), ("gte-Qwen2-1.5B-instruct", 5)]
    human = rows[3]
    assert (human["agent"], human["rank_among_models"], human["origin"]) == ("human", 4, "imported")
    assert {row["agent"] for row in rows} == {"model", "human"}


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "column"), [
    ("Human", "Classification/ara-Arab"),  # §4.1 "95.0 on Arabic sentiment analysis"
    ("Human", "STS/ara-Arab"),
    ("Human", "Reranking/eng-Latn"),
    ("jasper_en_vision_language_v1", "Classification/eng-Latn"),
    ("SFR-Embedding-Mistral", "Clustering/eng-Latn"),
    ("Qwen3-Embedding-0.6B", "Clustering/ara-Arab"),
    ("multilingual-e5-large", "Reranking/dan-Latn"),
    ("all-MiniLM-L6-v2", "STS/ara-Arab"),
    ("multilingual-e5-small", "Classification/rus-Cyrl"),
])
def test_a_sample_of_table_1_cells(hume_results, name, column):
    rows = {paper_name(row["name"]): row for row in leaderboard_json()}
    assert abs(100 * rows[name]["columns"][column] - table1_cell(name, column)) <= POINTS


@pytest.mark.django_db
def test_the_command_prints_csv_and_latex_like_the_paper(hume_results):
    out = StringIO()
    call_command("leaderboard", "--format", "csv", stdout=out)
    lines = list(csv.reader(io.StringIO(out.getvalue())))
    human = next(line for line in lines if line[1] == "baseline/Human")
    assert human[:4] == ["4", "baseline/Human", "human", "95.0"] and human[-2:] == ["77.6", "26"]
    out = StringIO()
    call_command("leaderboard", "--format", "latex", stdout=out)
    assert r"\textbf{95.0}" in out.getvalue() and r"\underline{\textbf{80.1}}" in out.getvalue()


@pytest.mark.django_db
def test_a_chosen_language_set_restricts_the_subsets(hume_results):
    rows = {paper_name(row["name"]): row for row in leaderboard_json("--languages", "eng-Latn")}
    assert rows["Human"]["n_subsets"] == 16 and rows["jasper_en_vision_language_v1"]["n_subsets"] == 16
    assert set(rows["Human"]["columns"]) == {f"{kind}/eng-Latn" for kind in
                                             ("Classification", "Clustering", "Reranking", "STS")}
    assert rows["Human"]["rank_among_models"] > 4  # humans are weakest in English (§4.2)


# --- The pages -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_leaderboard_page_ranks_the_human_among_models(researcher):
    response = researcher.get("/results/")
    assert response.status_code == 200
    human = response.context["human_row"]
    assert (human["name"], human["rank"], human["rank_among_models"]) == ("baseline/Human", 4, 4)
    assert round(100 * human["overall"], 1) == 77.6
    assert response.context["selection"].languages == ["eng-Latn", "ara-Arab", "rus-Cyrl", "dan-Latn", "nob-Latn"]
    text = " ".join(response.content.decode().split())
    assert "rank <strong>4th</strong> of 14 (among 13 models) with an overall score of <strong>77.6</strong>" in text
    assert "the best model, NovaSearch/jasper_en_vision_language_v1, scores 80.1" in text


@pytest.mark.django_db
def test_win_rates_against_the_best_median_and_mean_model(researcher):
    rows = {(row["group"], row["label"]): row for row in researcher.get("/results/").context["win_rates"]}
    overall = rows[("overall", "all subsets")]
    # §4.1/4.2: humans win 15% of tasks against the best model, 62% against the median
    assert overall["n"] == 26 and overall["wins"] == {"best": 4, "median": 16, "mean": 16}
    assert round(100 * overall["rate"]["best"]) == 15 and round(100 * overall["rate"]["median"]) == 62
    assert round(100 * rows[("language", "ara-Arab")]["rate"]["best"]) == 67  # §4.2 Arabic: 67% vs best
    assert rows[("scope", "monolingual")]["rate"]["best"] == 0.0  # §4.2: 0% on English-only tasks


@pytest.mark.django_db
def test_emotion_classification_per_task_view_marks_the_best_model_outside_the_wilson_ci(researcher):
    response = researcher.get("/results/tasks/HUMEEmotionClassification/")
    (row,) = response.context["rows"]
    # Table 8: human 45.8 [32.6, 59.7] (Wilson, N = 48), kappa 0.39, best model 75.4 starred
    assert round(100 * row["human"], 1) == 45.8
    assert [round(100 * bound, 1) for bound in row["ci"]] == [32.6, 59.7]
    assert (row["ci_method"], row["n_items"], row["n_annotators"]) == ("Wilson (n = 48)", 48, 2)
    assert (row["agreement_label"], row["band"], row["low_agreement"]) == ("κ = 0.39", "fair", True)
    best = row["best_model"]
    assert (best["name"], round(100 * best["score"], 1), best["outside_ci"]) == (
        "NovaSearch/jasper_en_vision_language_v1", 75.4, True)
    assert round(best["pct_of_human"]) == 165 and row["superhuman_warning"]
    html = response.content.decode()
    assert "[32.6, 59.7]" in html and "Wilson (n = 48)" in html
    assert '75.4<span class="mark-outside" title="outside the human 95% CI">*</span>' in html
    assert "⚠ at κ = 0.39" in html


@pytest.mark.django_db
def test_every_table_8_row_from_the_imported_reference_with_derived_cis(researcher):
    response = researcher.get("/results/tasks/")
    rows = {(row["task"], row["language"]): row for row in response.context["rows"]}
    assert set(rows) == set(TABLE8)
    for key, (human, low, high, best, starred) in TABLE8.items():
        row = rows[key]
        assert abs(100 * row["human"] - human) <= POINTS, key
        assert abs(100 * row["ci"][0] - low) <= POINTS and abs(100 * row["ci"][1] - high) <= POINTS, key
        assert abs(100 * row["best_model"]["score"] - best) <= POINTS, key
        assert row["best_model"]["outside_ci"] is starred, key
    # Appendix E.2: "Models perform outside the human confidence interval in 14 of 26 tasks"
    assert response.context["n_outside"] == 14
    methods = {row["kind"]: row["ci_method"].split(" (")[0] for row in rows.values() if row["n_annotators"] == 2}
    assert methods == {"Classification": "Wilson", "Clustering": "annotator range", "Reranking": "annotator range",
                       "STS": "Fisher z"}


@pytest.mark.django_db
def test_models_far_above_humans_on_low_agreement_tasks_read_as_a_warning(researcher):
    rows = {(row["task"], row["language"]): row for row in researcher.get("/results/tasks/").context["rows"]}
    warned = sorted(key[0].removeprefix("HUME") for key, row in rows.items() if row["superhuman_warning"])
    # low agreement (κ < 0.4 or ρ < 0.6) and the best model above the human score
    assert warned == ["ArxivClusteringP2P", "EmotionClassification", "MultilingualSentimentClassification",
                      "SIB200ClusteringS2S", "STSBenchmark"]


@pytest.mark.django_db
def test_the_per_task_page_shows_which_subset_each_language_is(researcher):
    response = researcher.get("/results/tasks/HUMESTS22/")
    assert ("ar", "ara-Arab") in response.context["mappings"]["imported"]
    assert [row["language"] for row in response.context["rows"]] == ["ara-Arab", "eng-Latn", "rus-Cyrl"]


@pytest.mark.django_db
def test_another_revision_can_be_picked_in_the_view(researcher):
    older = ResultRevision.objects.get(model__name="baseline/Human", revision="2025_09_25")
    rows = researcher.get(f"/results/?rev={older.pk}").context["rows"]
    human = next(row for row in rows if row["name"] == "baseline/Human")
    assert (human["revision"], human["is_current"], human["rank"]) == ("2025_09_25", False, 4)


@pytest.mark.django_db
def test_htmx_gets_the_partial_and_the_response_varies_on_it(researcher):
    response = researcher.get("/results/?lang=eng-Latn", headers={"HX-Request": "true"})
    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<div id="results-body">')
    assert response.context["selection"].languages == ["eng-Latn"]


# --- Exports -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_exports_carry_the_same_numbers_as_csv_json_and_latex(researcher):
    rows = json.loads(researcher.get("/results/export/leaderboard.json").content)
    assert rows[3]["name"] == "baseline/Human" and rows[3]["rank"] == 4
    lines = list(csv.reader(io.StringIO(researcher.get("/results/export/leaderboard.csv").content.decode())))
    assert lines[4][:3] == ["4", "baseline/Human", "human"] and lines[4][-2:] == ["77.6", "26"]
    latex = researcher.get("/results/export/leaderboard.tex")
    assert latex["Content-Disposition"] == 'attachment; filename="leaderboard.tex"'
    assert r"\multicolumn{4}{c}{Classification}" in latex.content.decode()
    tasks = list(csv.DictReader(io.StringIO(researcher.get("/results/export/tasks.csv").content.decode())))
    emotion = next(row for row in tasks if row["task"] == "HUMEEmotionClassification")
    assert (emotion["human"], emotion["ci_low"], emotion["ci_high"], emotion["best_score"],
            emotion["best_outside_ci"], emotion["agreement_band"]) == ("45.8", "32.6", "59.7", "75.4", "True", "fair")
    document = json.loads(researcher.get("/results/export/tasks.json").content)
    assert document["win_rates"]["overall"]["wins"]["best"] == 4 and len(document["tasks"]) == 26


@pytest.mark.django_db
def test_a_model_named_like_a_formula_cannot_run_in_a_spreadsheet(researcher, tmp_path):
    folder = tmp_path / "evil__model" / "r1"
    folder.mkdir(parents=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": '=HYPERLINK("http://x")'}))
    (folder / "HUMESTS12.json").write_text(json.dumps({
        "task_name": "HUMESTS12", "scores": {"test": [{"main_score": 0.9, "hf_subset": "default",
                                                       "languages": ["eng-Latn"]}]}}))
    call_command("import_results", str(tmp_path), stdout=StringIO())
    text = researcher.get("/results/export/leaderboard.csv").content.decode()
    assert "'=HYPERLINK" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text


# --- Who may see it ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_annotators_and_strangers_cannot_see_model_comparisons(hume_results, alice, client):
    assert client.get("/results/").status_code == 302  # to the login page
    client.force_login(alice.user)
    for url in ("/results/", "/results/tasks/", "/results/export/leaderboard.csv", "/results/plot.png",
                "/api/v1/results/leaderboard/"):
        assert client.get(url).status_code == 403, url


@pytest.mark.django_db
def test_an_admin_pins_another_revision_from_the_models_page(hume_results, carol, dave):
    older = ResultRevision.objects.get(model__name="baseline/Human", revision="2025_09_25")
    reader = Client()
    reader.force_login(dave)
    assert reader.post(f"/results/models/revisions/{older.pk}/current/").status_code == 403
    admin = Client()
    admin.force_login(carol)
    assert admin.get("/results/models/").context["is_admin"] is True
    assert admin.post(f"/results/models/revisions/{older.pk}/current/").status_code == 302
    older.refresh_from_db()
    assert older.is_current and older.model.current_pinned
    human = next(row for row in admin.get("/results/").context["rows"] if row["name"] == "baseline/Human")
    assert (human["revision"], human["is_current"]) == ("2025_09_25", True)
    admin.post(f"/results/models/{older.model.pk}/unpin/")
    assert ResultRevision.objects.get(model=older.model, is_current=True).revision == "v1.0"
