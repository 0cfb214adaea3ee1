"""HUME Figures 1 and 12–16 from the public results, checked against the numbers in the paper's captions
(El Assadi et al., arXiv:2510.10062): Figure 1 "Humans rank 4th (77.6)";
Figure 12 "15% vs best"; Figure 13 "Humans outperform the best models on only 4 tasks (15.4%)";
Figure 14 "61.5% win rate against median models"; Figure 15 "69% fall into the easy category … only two
tasks fall below 0.5". Drawn as SVG (valid XML with one bar per subset) and PNG."""
from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from agreement.results.compare import build, paper_figure
from measures.results import paper_figures as pf
from measures.results.subset_scores import HUME_LANGUAGES

pytestmark = pytest.mark.django_db


def figure(number: str) -> dict:
    return paper_figure(build(), number, "baseline/Human", HUME_LANGUAGES)


def test_figure_1_the_human_ranks_4th_of_14(hume_results) -> None:
    data = figure("1")
    assert [bar["label"] for bar in data["bars"]].index("Human") == 3
    assert data["summary"] == "Human ranks 4 of 14 (77.6)"


def test_figures_12_to_14_win_rates_and_gaps_match_the_captions(hume_results) -> None:
    assert figure("12")["summary"].startswith("overall: 15% vs best")
    assert figure("13")["summary"] == "humans ahead on 4 of 26 subsets (15.4%)"
    assert figure("14")["summary"] == "humans ahead on 16 of 26 subsets (61.5%)"
    sts22_ara = next(bar for bar in figure("13")["bars"] if bar["label"] == "STS22 [ara]")
    assert sts22_ara["value"] == pytest.approx(67.6 - 40.9, abs=0.2) and sts22_ara["group"] == "ahead"


def test_figure_15_difficulty_bands(hume_results) -> None:
    data = figure("15")
    assert data["counts"] == {"easy": 18, "medium": 6, "hard": 2}  # 18/26 = 69%
    assert {bar["label"] for bar in data["bars"] if bar["group"] == "hard"} == {"ArxivClusteringP2P [eng]",
                                                                                "Emotion [eng]"}
    assert pf.band(0.7) == "easy" and pf.band(0.5) == "medium" and pf.band(0.4999) == "hard"


def test_figure_16_model_range_per_subset(hume_results) -> None:
    data = figure("16")
    assert len(data["bars"]) == 26 and all(bar["value"] >= 0 for bar in data["bars"])
    assert data["summary"].startswith("widest: ")


@pytest.mark.parametrize("number", pf.FIGURES)
def test_every_figure_renders_as_svg_with_its_bars_and_as_png(hume_results, number) -> None:
    data = figure(number)
    root = ET.fromstring(pf.render(data, "svg"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(data["bars"]) >= 5
    png = pf.render(data, "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24])[0] == 1200


def test_the_cli_writes_a_figure_file_and_says_what_it_shows(hume_results, tmp_path) -> None:
    out = StringIO()
    call_command("leaderboard", "--figure", "13", "--out", str(tmp_path / "fig13.svg"), stdout=out)
    assert "humans ahead on 4 of 26 subsets (15.4%)" in out.getvalue()
    assert (tmp_path / "fig13.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(CommandError, match=r"--out FILE.svg or FILE.png"):
        call_command("leaderboard", "--figure", "13", "--out", str(tmp_path / "fig13.pdf"))


def test_the_figure_pages_serve_images_to_researchers_only(hume_results, dave, alice) -> None:
    researcher, annotator = Client(), Client()
    researcher.force_login(dave)
    annotator.force_login(alice.user)
    response = researcher.get("/results/figures/15.png")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert researcher.get("/results/figures/3.svg").status_code == 404
    assert annotator.get("/results/figures/15.svg").status_code in (302, 403)
