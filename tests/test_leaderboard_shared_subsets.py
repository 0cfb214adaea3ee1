"""The leaderboard ranks over the subsets the compared rows share (issue 28): a project's own tasks add
subsets no imported model has, and requiring all of them ranked nobody. The pure rule on small fixtures
(expected values worked out by hand beside each assertion), then the demo through the page, the export and
Figure 1: the 13 HUME models and the human baseline ranked as in HUME Table 1 (arXiv:2510.10062; the
paper's numbers are in tests/hume_paper.py), the project's rows listed without a rank.
"""
from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from agreement.results import compare as rc
from measures.results.subset_scores import HUME_LANGUAGES, SubsetScore
from measures.results.table1 import ranked_subsets, table1
from tests.hume_paper import OVERALL, POINTS, RESULTS

ENG, ARA, DAN = "eng-Latn", "ara-Arab", "dan-Latn"


def synthetic(*items: tuple[str, str, str, str, float]) -> list[SubsetScore]:
    return [SubsetScore(*item) for item in items]


# Three models and a reference human on three HUME subsets; two rows run here on a project task (STS22/dan)
# that the imported models lack; the reference human also has that project subset.
FIXTURE = synthetic(
    ("m1", "model", "HUMESTS12", ENG, 0.80), ("m1", "model", "HUMESTS22", ARA, 0.50),
    ("m1", "model", "HUMESICK-R", ENG, 0.60),
    ("m2", "model", "HUMESTS12", ENG, 0.70), ("m2", "model", "HUMESTS22", ARA, 0.70),
    ("m2", "model", "HUMESICK-R", ENG, 0.70),
    ("m3", "model", "HUMESTS12", ENG, 0.40), ("m3", "model", "HUMESTS22", ARA, 0.40),
    ("m3", "model", "HUMESICK-R", ENG, 0.40),
    ("Human", "human", "HUMESTS12", ENG, 0.90), ("Human", "human", "HUMESTS22", ARA, 0.60),
    ("Human", "human", "HUMESICK-R", ENG, 0.45), ("Human", "human", "STS22", DAN, 0.99),
    ("bm25 (run here)", "model", "STS22", DAN, 0.30),
    ("minilm (run here)", "model", "STS22", DAN, 0.50),
)
KIND_OF_TASK = {"STS22": "STS"}  # a project task outside HUME's 16 names its kind
HUME_THREE = {("HUMESTS12", ENG), ("HUMESTS22", ARA), ("HUMESICK-R", ENG)}


def test_shared_ranks_the_block_of_rows_and_subsets_that_holds_the_most_scores():
    # candidates: the 3 HUME subsets, had by m1, m2, m3 and Human: 4 rows × 3 = 12 scores;
    # {STS22/dan}: Human and the two rows run here, 3 × 1 = 3; all 4 subsets: Human alone, 1 × 4 = 4
    assert ranked_subsets(FIXTURE) == HUME_THREE
    rows = table1(FIXTURE, subsets=ranked_subsets(FIXTURE), kinds=KIND_OF_TASK)
    ranked = [(row["name"], row["rank"], round(row["overall"], 4)) for row in rows if row["rank"]]
    # m2 (0.7 + 0.7 + 0.7) / 3 = 0.7; Human (0.9 + 0.6 + 0.45) / 3 = 0.65; m1 (0.8 + 0.5 + 0.6) / 3 = 0.6333;
    # m3 0.4 — the human's project subset (0.99) is not in the mean
    assert ranked == [("m2", 1, 0.7), ("Human", 2, 0.65), ("m1", 3, 0.6333), ("m3", 4, 0.4)]
    others = {row["name"]: row for row in rows if row["rank"] is None}
    assert set(others) == {"bm25 (run here)", "minilm (run here)"}
    assert others["bm25 (run here)"]["n_subsets"] == 0 and others["bm25 (run here)"]["n_subsets_outside"] == 1
    human = next(row for row in rows if row["name"] == "Human")
    assert (human["n_subsets"], human["n_subsets_outside"], human["complete"]) == (3, 1, True)


def test_requiring_all_subsets_ranks_only_rows_with_every_one_as_before():
    # every subset some model has: the 3 HUME subsets and STS22/dan; only Human has all four
    assert ranked_subsets(FIXTURE, rank_over="all") == HUME_THREE | {("STS22", DAN)}
    rows = table1(FIXTURE, subsets=ranked_subsets(FIXTURE, rank_over="all"), kinds=KIND_OF_TASK)
    # Human: (0.9 + 0.6 + 0.45 + 0.99) / 4 = 0.735
    assert [(row["name"], row["rank"], round(row["overall"], 3)) for row in rows if row["rank"]] == [
        ("Human", 1, 0.735)]
    assert table1(FIXTURE, kinds=KIND_OF_TASK) == rows  # the old default of table1 is "all"


def test_the_shared_subsets_may_be_no_rows_own_set():
    # a has {12, 22, SICK}, b has {12, 22, STSB}: neither set is shared, their intersection {12, 22} is
    items = synthetic(
        ("a", "model", "HUMESTS12", ENG, 0.2), ("a", "model", "HUMESTS22", ARA, 0.4),
        ("a", "model", "HUMESICK-R", ENG, 1.0),
        ("b", "model", "HUMESTS12", ENG, 0.5), ("b", "model", "HUMESTS22", ARA, 0.5),
        ("b", "model", "HUMESTSBenchmark", ENG, 0.0),
    )
    assert ranked_subsets(items) == {("HUMESTS12", ENG), ("HUMESTS22", ARA)}
    rows = table1(items, subsets=ranked_subsets(items))
    # b (0.5 + 0.5) / 2 = 0.5 beats a (0.2 + 0.4) / 2 = 0.3; with all four subsets neither is ranked
    assert [(row["name"], row["rank"], round(row["overall"], 4)) for row in rows] == [("b", 1, 0.5), ("a", 2, 0.3)]
    assert [row["rank"] for row in table1(items, subsets=ranked_subsets(items, rank_over="all"))] == [None, None]


def test_a_tie_in_size_goes_to_the_block_with_more_rows_and_the_choice_is_stable():
    # {12}: rows x, y, z → 3 × 1 = 3; x's own {12, 22, SICK}: x alone → 1 × 3 = 3: the block with 3 rows wins
    items = synthetic(
        ("x", "model", "HUMESTS12", ENG, 0.1), ("x", "model", "HUMESTS22", ARA, 0.1),
        ("x", "model", "HUMESICK-R", ENG, 0.1),
        ("y", "model", "HUMESTS12", ENG, 0.3), ("z", "model", "HUMESTS12", ENG, 0.2),
    )
    assert ranked_subsets(items) == {("HUMESTS12", ENG)}
    assert [(r["name"], r["rank"]) for r in table1(items, subsets=ranked_subsets(items))] == [
        ("y", 1), ("z", 2), ("x", 3)]
    assert all(ranked_subsets(list(reversed(items))) == {("HUMESTS12", ENG)} for _ in range(3))


def test_no_scores_rank_over_nothing_and_a_bad_choice_is_refused():
    assert ranked_subsets([]) == set()
    assert ranked_subsets(synthetic(("fr", "llm", "HUMESTS22", "fra-Latn", 0.9))) == set()  # not a HUME language
    with pytest.raises(ValueError, match="rank_over must be one of"):
        ranked_subsets(FIXTURE, rank_over="some")


# --- the demo, through the page ------------------------------------------------------------------------------


@pytest.fixture
def demo(db: None) -> Client:
    """The run command's demo: the tasks and people, the HUME results, MiniLM and the classical metrics run
    here on the English STS task (its report computed), so the project adds subsets no imported model has."""
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=StringIO())
    call_command("import_results", str(RESULTS), stdout=StringIO())
    call_command("demo_models", "--wait", "--tasks", "STS (English)", stdout=StringIO())
    call_command("report", "STS (English)", stdout=StringIO())
    client = Client()
    assert client.login(username="dave", password="hume-demo")
    return client


def paper_name(name: str) -> str:
    return "Human" if name == "baseline/Human" else name.split("/")[-1]


@pytest.mark.django_db
def test_on_the_demo_requiring_all_subsets_ranks_nobody_and_the_default_ranks_hume_table_1(demo):
    comparison = rc.build()
    strict = rc.leaderboard_rows(comparison, HUME_LANGUAGES, rank_over="all")
    assert [row for row in strict if row["rank"] is not None] == []  # what the issue saw: Rank "–" everywhere
    rows = rc.leaderboard_rows(comparison, HUME_LANGUAGES)
    ranked = {paper_name(row["name"]): row for row in rows if row["rank"] is not None}
    assert set(ranked) == set(OVERALL)  # the 13 models and the human baseline: every complete row
    for name, overall in OVERALL.items():
        assert abs(100 * ranked[name]["overall"] - overall) <= POINTS, name
    assert (ranked["Human"]["rank"], ranked["jasper_en_vision_language_v1"]["rank"]) == (4, 1)  # Table 1
    unranked = {row["name"] for row in rows if row["rank"] is None}
    assert {"Humans (this project)", "bm25 (run here)", "sentence-transformers/all-MiniLM-L6-v2 (run here)"} <= unranked
    summary = rc.ranking_summary(comparison, HUME_LANGUAGES, rows)
    # 26 HUME subsets; the demo's STS (English) adds STS22/eng-Latn, a subset no imported model has
    assert (summary["n_subsets"], summary["n_subsets_all"], summary["n_rows"]) == (26, 27, 14)


@pytest.mark.django_db
def test_the_demo_leaderboard_page_says_what_it_ranks_and_draws_figure_1(demo):
    page = demo.get("/results/").content.decode()
    assert "Ranked over the 26 subsets all 14 ranked rows share (of 27 in the chosen languages)" in page
    assert 'data-name="baseline/Human">\n        <td class="num">4</td>' in page
    assert 'data-name="NovaSearch/jasper_en_vision_language_v1">\n        <td class="num">1</td>' in page
    assert "Require all 27 subsets" in page and 'id="hume-reference"' in page
    # the compared human is the ranked reference (issue 34 item 6); this project's humans, on one demo subset
    # no imported model has (STS22/eng-Latn), are one click away (below)
    assert ("<strong>baseline/Human</strong> rank <strong>4th</strong> of 14 (among 13 models) with an "
            "overall score of <strong>77.6</strong>") in page  # HUME Table 1; the 6 rows run here are not ranked
    figure = page[page.index('id="figure-1"'):page.index("</section>", page.index('id="figure-1"'))]
    assert '<svg role="img"' in figure and "nothing to show" not in figure and "style=" not in figure
    assert "Human ranks 4 of 14 (77.6)" in figure  # Figure 1's caption: the human among the 14 ranked rows

    strict = demo.get("/results/?subsets=all").content.decode()
    assert "Ranked over all 27 subsets of the chosen languages" in strict
    assert "Figure 1 needs two or more ranked rows; 0 are ranked here." in strict
    assert '<input type="hidden" name="subsets" value="all">' in strict  # a language change keeps the choice


@pytest.mark.django_db
def test_hume_reference_table_is_one_click_and_holds_only_the_papers_rows(demo):
    page = demo.get("/results/?table=hume").content.decode()
    assert "Show this project&#x27;s rows too" in page or "Show this project's rows too" in page
    assert "(run here)" not in page and "Humans (this project)" not in page
    exported = list(csv.DictReader(io.StringIO(demo.get("/results/export/leaderboard.csv?table=hume").content
                                               .decode())))
    assert [(paper_name(row["name"]), row["rank"]) for row in exported[:5]] == [
        ("jasper_en_vision_language_v1", "1"), ("SFR-Embedding-Mistral", "2"), ("e5-mistral-7b-instruct", "3"),
        ("Human", "4"), ("gte-Qwen2-1.5B-instruct", "5")]  # HUME Table 1's order
    assert len(exported) == 14 and all(row["n_subsets"] == "26" for row in exported)


@pytest.mark.django_db
def test_the_export_ranks_like_the_page_and_all_subsets_like_before(demo):
    shared = list(csv.DictReader(io.StringIO(demo.get("/results/export/leaderboard.csv").content.decode())))
    assert sum(bool(row["rank"]) for row in shared) == 14
    strict = list(csv.DictReader(io.StringIO(demo.get("/results/export/leaderboard.csv?subsets=all")
                                             .content.decode())))
    assert sum(bool(row["rank"]) for row in strict) == 0
    figure = demo.get("/results/figures/1.svg").content.decode()
    assert "nothing to show" not in figure and "ranks 4 of 14" in figure


@pytest.mark.django_db
def test_the_api_and_the_command_take_the_same_choice(demo):
    shared = demo.get("/api/v1/results/leaderboard/").json()["rows"]
    strict = demo.get("/api/v1/results/leaderboard/?subsets=all").json()["rows"]
    assert (sum(row["rank"] is not None for row in shared), sum(row["rank"] is not None for row in strict)) == (14, 0)
    for option, n_ranked in (("shared", 14), ("all", 0)):
        out = StringIO()
        call_command("leaderboard", "--rank-over", option, stdout=out)
        assert sum(row["rank"] is not None for row in json.loads(out.getvalue())) == n_ranked


@pytest.mark.django_db
def test_with_the_demos_own_report_the_default_compares_a_ranked_human_and_this_projects_is_one_click_away(demo):
    # issue 34 item 6: the demo's own report gave "Humans (this project)" scores on 1 subset outside the 26
    # ranked ones, and defaulting to them showed no rank and win rates of "100% (1 subset)"
    response = demo.get("/results/")
    assert response.context["selection"].human == "baseline/Human"
    assert response.context["selection"].humans == ["Humans (this project)", "baseline/Human"]
    page = response.content.decode()
    assert "<strong>baseline/Human</strong> rank <strong>4th</strong> of 14 (among 13 models)" in page
    assert "scores on 0 of the 26 ranked subsets" not in page
    rates = {(row["group"], row["label"]): row for row in response.context["win_rates"]}
    overall = rates[("overall", "all subsets")]
    assert overall["n"] == 26  # the 26 HUME subsets, not 1
    # HUME §4.1: humans exceed the best model on 15.4% of the 26 subsets (4) and the median on 61.5% (16)
    assert (overall["wins"]["best"], overall["wins"]["median"]) == (4, 16)
    assert (round(100 * overall["rate"]["best"], 1), round(100 * overall["rate"]["median"], 1)) == (15.4, 61.5)
    win_rates = page[page.index('id="win-rates"'):page.index("</section>", page.index('id="win-rates"'))]
    assert "<td class=\"num\">1</td>" not in win_rates  # no group of a single subset from the project's row
    # one click away: the link compares this project's humans, who then say why they have no rank
    link = 'href="?lang=eng-Latn&amp;lang=ara-Arab&amp;lang=rus-Cyrl&amp;lang=dan-Latn&amp;lang=nob-Latn'
    assert f'{link}&amp;human=Humans+%28this+project%29"' in page and "Compare this project's humans</a>" in page
    theirs = demo.get("/results/", {"lang": list(HUME_LANGUAGES), "human": "Humans (this project)"})
    assert theirs.context["selection"].human == "Humans (this project)"
    html = theirs.content.decode()
    assert "<strong>Humans (this project)</strong>: scores on 0 of the 26 ranked subsets (and 1 other)" in html
    assert 'id="project-humans"' not in html
