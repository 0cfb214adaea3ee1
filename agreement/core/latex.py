"""Text as LaTeX that pdflatex typesets: the one escape every exported table uses (leaderboards, HUME's
tables, SAGE Table 1, retrieval evaluations).

Names are untrusted (`e5_base`, `50%`, `A&B`), so LaTeX's ten special characters are escaped; Greek
letters (the IAA column prints κ, ρ, α) become math symbols, since pdflatex's utf8 input has no glyph for
them in text. Accented Latin letters pass through: `\\usepackage[utf8]{inputenc}` with T1 fonts sets them.
"""
from __future__ import annotations

import unicodedata

SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
# The 24 Greek letters by their Unicode names (which spell LAMDA); LaTeX names all small ones but omicron,
# and only the capitals that do not look like Latin ones (Alpha is A).
_SMALL = {"ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA", "ETA", "THETA", "IOTA", "KAPPA", "LAMBDA", "MU",
          "NU", "XI", "PI", "RHO", "SIGMA", "TAU", "UPSILON", "PHI", "CHI", "PSI", "OMEGA"}
_CAPITALS = {"GAMMA", "DELTA", "THETA", "LAMBDA", "XI", "PI", "SIGMA", "UPSILON", "PHI", "PSI", "OMEGA"}
_LATIN_LOOKALIKES = {"ALPHA": "A", "BETA": "B", "EPSILON": "E", "ZETA": "Z", "ETA": "H", "IOTA": "I",
                     "KAPPA": "K", "MU": "M", "NU": "N", "OMICRON": "O", "RHO": "P", "TAU": "T", "CHI": "X"}


def _greek(char: str) -> str | None:
    """A Greek letter as LaTeX pdflatex sets in text, or None for one it has no command for."""
    name = unicodedata.name(char, "").replace("LAMDA", "LAMBDA")
    if name.startswith("GREEK SMALL LETTER "):
        letter = name.removeprefix("GREEK SMALL LETTER ")
        if letter == "FINAL SIGMA":
            return r"\ensuremath{\varsigma}"
        if letter == "OMICRON":
            return "o"
        return rf"\ensuremath{{\{letter.lower()}}}" if letter in _SMALL else None
    if name.startswith("GREEK CAPITAL LETTER "):
        letter = name.removeprefix("GREEK CAPITAL LETTER ")
        if letter in _CAPITALS:
            return rf"\ensuremath{{\{letter.capitalize()}}}"
        return _LATIN_LOOKALIKES.get(letter)
    return None


def escape(text: object) -> str:
    """`text` (any value, as str) with LaTeX's specials escaped and Greek letters as math symbols."""
    out = []
    for char in str(text):
        if char in SPECIALS:
            out.append(SPECIALS[char])
        elif "\u0370" <= char <= "\u03ff":
            out.append(_greek(char) or char)
        else:
            out.append(char)
    return "".join(out)
