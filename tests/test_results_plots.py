"""HUME Figure 2 as inline SVG and as SVG/PNG downloads; hostile names stay text everywhere."""
from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from measures.results.figure2 import figure2_inline_svg, figure2_png, figure2_svg, position

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> $\\frac{1}{2}$ & co'
ROWS = [
    {"task": "HUMESTS22", "kind": "STS", "language": "ara-Arab", "human": 0.675, "min": 0.062, "max": 0.409,
     "median": 0.29, "n_models": 13, "ci": [0.417, 0.833]},
    {"task": "HUMESTS22", "kind": "STS", "language": "eng-Latn", "human": 0.784, "min": 0.70, "max": 0.829,
     "median": 0.78, "n_models": 13, "ci": None},
]


def svg_texts(document: str) -> list[str]:
    return ["".join(node.itertext()) for node in ET.fromstring(document).iter(f"{SVG}text")]


def test_the_svg_is_valid_xml_with_one_labelled_row_per_subset():
    document = figure2_svg(ROWS, title="STS22")
    texts = svg_texts(document)
    assert "STS22 [ara]" in texts and "STS22 [eng]" in texts and "STS22" in texts
    assert "models: worst–best" in texts and "human 95% CI" in texts


def test_the_png_is_a_real_image_about_1350_pixels_wide():
    data = figure2_png(ROWS, title="STS22")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1350 and 300 < height < 600


def test_where_the_human_stands_against_the_model_range():
    assert [position(row) for row in ROWS] == ["above", "within"]
    assert position({"human": 0.1, "min": 0.2, "max": 0.3}) == "below"


def test_a_hostile_title_is_escaped_and_never_mathtext():
    inline = figure2_inline_svg(ROWS, title=HOSTILE)
    assert "<script>" not in inline
    assert inline.startswith('<svg role="img" aria-label="&lt;script>alert(&quot;x&quot;)&lt;/script>')
    assert HOSTILE in svg_texts(figure2_svg(ROWS, title=HOSTILE))  # the dollar signs stay literal text


@pytest.fixture
def researcher(db, dave, tmp_path) -> Client:
    """Two models and a human reference on STS22 (Arabic and English); the model name is hostile."""
    for folder, name, scores in (("org__a", "org/a", (0.06, 0.70)), ("org__b", HOSTILE, (0.41, 0.83)),
                                 ("baseline__Human", "baseline/Human", (0.675, 0.784))):
        root = tmp_path / folder / "r1"
        root.mkdir(parents=True)
        (root / "model_meta.json").write_text(json.dumps({"name": name, "reference": "javascript:alert(1)"}))
        subsets = [{"main_score": scores[0], "hf_subset": "ar", "languages": ["ara-Arab"]},
                   {"main_score": scores[1], "hf_subset": "en", "languages": ["eng-Latn"]}]
        (root / "HUMESTS22.json").write_text(json.dumps({"task_name": "HUMESTS22", "scores": {"test": subsets}}))
    call_command("import_results", str(tmp_path), stdout=StringIO())
    client = Client()
    client.force_login(dave)
    return client


def test_the_task_page_shows_the_plot_inline_and_offers_svg_and_png(researcher):
    response = researcher.get("/results/tasks/HUMESTS22/")
    html = response.content.decode()
    assert '<svg role="img" aria-label="baseline/Human within the range of model scores: STS22' in html
    assert 'href="/results/tasks/HUMESTS22/plot.svg?lang=' in html
    png = researcher.get("/results/tasks/HUMESTS22/plot.png?lang=ara-Arab&lang=eng-Latn")
    assert png["Content-Type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert png["Content-Disposition"] == 'attachment; filename="hume-figure2-sts22.png"'
    svg = researcher.get("/results/tasks/HUMESTS22/plot.svg")
    assert svg["Content-Type"].startswith("image/svg+xml")
    assert "STS22 [ara]" in svg_texts(svg.content.decode())
    assert researcher.get("/results/tasks/HUMESTS22/plot.gif").status_code == 404


def test_a_hostile_model_name_is_escaped_in_every_page(researcher):
    for url in ("/results/", "/results/tasks/", "/results/tasks/HUMESTS22/", "/results/models/"):
        html = researcher.get(url).content.decode()
        assert "<script>alert" not in html, url
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html, url
        assert "javascript:" not in html, url  # an imported reference link is kept only if http(s)


def test_an_unknown_task_is_not_found(researcher):
    assert researcher.get("/results/tasks/HUMEUnknown/").status_code == 404
    assert researcher.get("/results/tasks/HUMEUnknown/plot.png").status_code == 404


def test_the_plot_follows_the_chosen_languages(researcher):
    labels = svg_texts(researcher.get("/results/plot.svg?lang=eng-Latn").content.decode())
    assert "STS22 [eng]" in labels and "STS22 [ara]" not in labels
