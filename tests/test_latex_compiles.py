"""Every LaTeX table the app exports compiles: wrapped in a minimal article with booktabs and run through
`pdflatex -interaction=nonstopmode -halt-on-error` (texlive-latex-base + texlive-latex-recommended, which
scripts/services.sh installs). SAGE Table 1 (`sage run --format latex`), HUME's tables
(`leaderboard --table N --format latex` on the public results in demo/) and `evaluate_runs --format latex`;
and names full of LaTeX's special characters (`e5_base`, `50%`, `A&B`, `#1`) and the Greek letters of the
IAA column (κ, ρ, α), which pdflatex cannot typeset raw."""
from __future__ import annotations

import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agreement.sage.table import to_latex
from measures.sage.categories import CATEGORIES
from tests.retrieval_helpers import load_minifact, load_run

PREAMBLE = (r"\documentclass{article}" "\n" r"\usepackage[utf8]{inputenc}" "\n" r"\usepackage[T1]{fontenc}" "\n"
            r"\usepackage{booktabs}" "\n" r"\begin{document}" "\n")
SAGE_STUDY = str(Path(__file__).parent / "sage_study")
UNTRUSTED = r"e5_base 50% A&B #1 $x$ {y} ~z^ back\slash"


def compile_latex(body: str, folder: Path) -> Path:
    """Compile `body` inside a minimal document; fail with pdflatex's own log when it does not compile."""
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is missing: scripts/services.sh installs texlive-latex-base"
    (folder / "table.tex").write_text(PREAMBLE + body + "\n" + r"\end{document}" + "\n", encoding="utf-8")
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "table.tex"], cwd=folder,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    pdf = folder / "table.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    return pdf


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_sage_table_1_from_the_command_compiles(tmp_path) -> None:
    latex = command("sage", "run", "--datasets", SAGE_STUDY, "--metrics", "levenshtein,jaccard", "--format", "latex")
    assert r"\toprule" in latex
    compile_latex(latex, tmp_path)


def test_sage_table_1_with_untrusted_names_compiles(tmp_path) -> None:
    scores = dict.fromkeys(CATEGORIES, 0.5) | {CATEGORIES[0]: None}
    table = {"rows": [{"name": UNTRUSTED, "group": "embedding", "scores": scores, "overall": 0.5},
                      {"name": "κ-ρ α", "group": "human_raters_&_co", "scores": scores, "overall": None}]}
    latex = to_latex(table, caption="50% of names_with & #")
    assert r"e5\_base 50\% A\&B \#1" in latex
    compile_latex(latex, tmp_path)


@pytest.mark.django_db
@pytest.mark.parametrize("table", ["1", "2", "4", "5", "6", "7", "8", "5.1"])
def test_each_hume_table_from_the_leaderboard_compiles(hume_results, table, tmp_path) -> None:
    latex = command("leaderboard", "--table", table, "--format", "latex")
    assert latex.startswith(r"\begin{table}")
    compile_latex(latex, tmp_path)


@pytest.mark.django_db
def test_evaluate_runs_latex_compiles(tmp_path) -> None:
    load_minifact()
    load_run("run_50%_&_#1")
    latex = command("evaluate_runs", "MiniFact", "--format", "latex", "--k", "10,100")
    assert r"run\_50\%\_\&\_\#1" in latex
    compile_latex(latex, tmp_path)


def test_greek_letters_become_math_symbols_and_specials_are_escaped() -> None:
    from agreement.core.latex import escape

    assert escape("κ = 0.39") == r"\ensuremath{\kappa} = 0.39"
    assert escape("ρ α Ω Α ο ς") == (r"\ensuremath{\rho} \ensuremath{\alpha} \ensuremath{\Omega} A o "
                                     r"\ensuremath{\varsigma}")
    assert escape("e5_base 50% A&B #1") == r"e5\_base 50\% A\&B \#1"
